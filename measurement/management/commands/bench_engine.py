"""Time the engine per question with an instant model; score recall when gold ids are given.

Without files, a small synthetic archive (three sub-corpora, 50 questions) is built in memory.
With ``--corpus`` and ``--questions`` (JSONL), R@10 and MRR are measured for each policy and for
plain BM25 over the same in-memory index. Nothing touches the database: the engine runs against
``InMemoryRetriever`` and ``InstantModel``, so the time measured is the engine's own.
``--write-doc FILE`` writes the table into the block ``bench-engine`` of that document.
"""

from __future__ import annotations

import json
import shlex
import statistics
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from agent.engine.instant_model import InstantModel
from agent.engine.investigation import run_investigation
from agent.engine.llm_policy import LLMPolicy
from agent.engine.memory_retriever import InMemoryRetriever, chunk
from agent.engine.offline import OfflinePolicy
from agent.engine.policy import Policy
from agent.engine.sinks import ListSink
from agent.investigations.judges import judge_in_use
from common.document_keys import document_key
from common.generated_docs import (
    GeneratedBlockError,
    check_generated_block,
    shown_path,
    write_generated_block,
)
from common.ranking_metrics import multi_gold_mrr, recall_at_k
from common.search import Hit, SearchRequest, SubCorpusInfo
from measurement.evaluation.metrics import median
from measurement.evaluation.questions import QuestionsError, load_questions

PAPERS = [("legaulois", "Le Gaulois"), ("lintransigeant", "L'Intransigeant")]
TOPICS = ["sucres", "céréales", "armée", "budget", "écoles", "chemins de fer", "loteries",
          "douanes", "colonies", "impôt foncier"]
NAMES = ["Lejeune", "Pelletan", "Rouvier", "Méline", "Floquet", "Ribot", "Wilson", "Freppel"]
CHUNK_WORDS = 1000


def synthetic_archive() -> tuple[InMemoryRetriever, list[tuple[str, list[str]]]]:
    """Build a deterministic archive of three sub-corpora and 50 questions without gold ids."""
    infos = [SubCorpusInfo(slug, name, "press") for slug, name in PAPERS]
    infos.append(SubCorpusInfo("debats", "Chambre des députés (Journal officiel)", "debates"))
    chunks: list[Hit] = []
    for i in range(120):
        slug = infos[i % 3].slug
        topic, name = TOPICS[i % len(TOPICS)], NAMES[i % len(NAMES)]
        day = f"1887-{1 + i % 12:02d}-{1 + i % 28:02d}"
        for part in range(3):
            text = (f"Séance du {day}. M. {name} parle des {topic} et de la commission. "
                    f"Partie {part}: " + " ".join(TOPICS[(i + part + k) % 10] for k in range(40)))
            chunks.append(chunk(len(chunks) + 1, i + 1, document_key(slug, str(i)), slug, day, text,
                                title=f"{slug} {day}"))
    questions: list[tuple[str, list[str]]] = [
        (f"Comment M. {NAMES[i % 8]} parle-t-il des {TOPICS[i % 10]} à la Chambre, "
         f"et comment la presse en rend-elle compte ?", []) for i in range(50)]
    return InMemoryRetriever(chunks, infos), questions


def corpus_archive(corpus: Path) -> InMemoryRetriever:
    """Load a JSONL corpus (doc_id, collection, source, date, text) in chunks of 1,000 words."""
    chunks: list[Hit] = []
    infos: dict[str, SubCorpusInfo] = {}
    with corpus.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            doc = json.loads(line)
            slug = doc["collection"]
            infos.setdefault(slug, SubCorpusInfo(slug, doc.get("source", slug),
                                                 doc.get("source", "")))
            words = doc["text"].split()
            for start in range(0, max(1, len(words)), CHUNK_WORDS):
                chunks.append(chunk(len(chunks) + 1, number, doc["doc_id"], slug, doc.get("date"),
                                    " ".join(words[start:start + CHUNK_WORDS])))
    return InMemoryRetriever(chunks, list(infos.values()))


def _row(name: str, times: list[float], recalls: list[float], mrrs: list[float]) -> str:
    time = f"{median(times):.1f}" if times else "–"
    if not recalls:
        return f"| {name} | {time} | – | – |"
    return (f"| {name} | {time} | {statistics.mean(recalls):.3f} | "
            f"{statistics.mean(mrrs):.3f} |")


def _command_line(options: dict) -> str:
    """Say how to measure this again (files by their place in the repository)."""
    words = ["manage.py", "bench_engine", "--limit", str(options["limit"])]
    for name in ("corpus", "questions", "write_doc"):
        if options[name]:
            words += [f"--{name.replace('_', '-')}",
                      shown_path(options[name], Path(settings.BASE_DIR))]
    return shlex.join(words)


class Command(BaseCommand):
    help = "Time the engine per question with an instant model (and score recall with gold ids)."

    def add_arguments(self, parser):
        parser.add_argument("--limit", type=int, default=50, help="questions to run")
        parser.add_argument("--corpus", type=Path, help="corpus JSONL (with --questions)")
        parser.add_argument("--questions", type=Path, help="questions JSONL with gold_ids")
        parser.add_argument("--write-doc", type=Path,
                            help="write the table into this document's bench-engine block")

    def handle(self, *args, **options):
        if bool(options["corpus"]) != bool(options["questions"]):
            raise CommandError("--corpus and --questions go together.")
        if options["write_doc"]:
            try:
                check_generated_block(options["write_doc"], "bench-engine")
            except GeneratedBlockError as exc:
                raise CommandError(str(exc)) from None
        if options["corpus"]:
            try:
                rows = load_questions(options["questions"])
            except QuestionsError as exc:
                raise CommandError(str(exc)) from None
            retriever = corpus_archive(options["corpus"])
            questions = [(row.question, list(row.gold_keys)) for row in rows]
        else:
            retriever, questions = synthetic_archive()
        questions = questions[: options["limit"]]
        lines = ["| system | median engine time (ms/question) | R@10 | MRR |",
                 "|---|---:|---:|---:|"]
        learnt = judge_in_use().model
        policies: list[tuple[str, Policy]] = [
            ("LLM policy", LLMPolicy(InstantModel())),
            ("offline policy, rule judge", OfflinePolicy()),
            *([("offline policy, learnt judge (in-sample on dev questions)",
                OfflinePolicy(judge_model=learnt))] if learnt is not None else []),
        ]
        for label, policy in policies:
            times, recalls, mrrs = [], [], []
            for question, gold in questions:
                result = run_investigation(question, policy=policy, retriever=retriever,
                                           sink=ListSink())
                times.append(result.counters.engine_seconds * 1000)
                if gold:
                    recalls.append(recall_at_k(result.ranked_document_keys, gold, 10))
                    mrrs.append(multi_gold_mrr(result.ranked_document_keys, gold))
            lines.append(_row(f"engine, {label}", times, recalls, mrrs))
        if questions and questions[0][1]:
            recalls, mrrs = [], []
            for question, gold in questions:
                hits = retriever.search(SearchRequest("bm25", question, limit=400))
                ranked = list(dict.fromkeys(hit.document_key for hit in hits))
                recalls.append(recall_at_k(ranked, gold, 10))
                mrrs.append(multi_gold_mrr(ranked, gold))
            lines.append(_row("plain BM25 (same index)", [], recalls, mrrs))
        table = "\n".join(lines)
        self.stdout.write(table)
        if options["write_doc"]:
            try:
                write_generated_block(options["write_doc"], "bench-engine",
                                      f"{len(questions)} questions.\n\n{table}",
                                      command=_command_line(options))
            except GeneratedBlockError as exc:
                raise CommandError(str(exc)) from None
