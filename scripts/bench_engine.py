"""Measure engine time per question with an instant fake model; optionally score recall.

Usage: python scripts/bench_engine.py [--questions N] [--corpus corpus.jsonl --qa questions.jsonl]
Without a corpus, a small synthetic archive is generated. With one, R@10 and MRR are printed for
the offline policy and for plain BM25 over the same in-memory index. A benchmark, not a test.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agent.engine.investigation import run_investigation  # noqa: E402
from agent.engine.llm_policy import LLMPolicy  # noqa: E402
from agent.engine.offline import OfflinePolicy  # noqa: E402
from agent.engine.policy import Policy  # noqa: E402
from agent.engine.prompting import Prompt  # noqa: E402
from agent.engine.sinks import ListSink  # noqa: E402
from agent.engine.types import ChatResult  # noqa: E402
from common.search import Hit, SearchRequest, SubCorpusInfo  # noqa: E402
from tests.fakes.retriever import InMemoryRetriever, chunk  # noqa: E402
from tests.fakes.stub_server import plausible_reply  # noqa: E402

PAPERS = [("legaulois", "Le Gaulois"), ("lintransigeant", "L'Intransigeant")]
TOPICS = ["sucres", "céréales", "armée", "budget", "écoles", "chemins de fer", "loteries",
          "douanes", "colonies", "impôt foncier"]
NAMES = ["Lejeune", "Pelletan", "Rouvier", "Méline", "Floquet", "Ribot", "Wilson", "Freppel"]


class InstantModel:
    """Answer every prompt at once with a plausible schema-valid reply."""

    def complete(self, prompt: Prompt) -> ChatResult:
        """Reply without waiting."""
        text = plausible_reply(prompt)
        return ChatResult(text=text, model="instant", input_tokens=len(prompt.user) // 4,
                          output_tokens=len(text) // 4)


def synthetic_archive() -> tuple[list[Hit], list[SubCorpusInfo], list[str]]:
    """Build a deterministic archive of three sub-corpora and 50 questions."""
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
            chunks.append(chunk(len(chunks) + 1, i + 1, f"{slug}:{i}", slug, day, text,
                                title=f"{slug} {day}"))
    questions = [f"Comment M. {NAMES[i % 8]} parle-t-il des {TOPICS[i % 10]} à la Chambre, "
                 f"et comment la presse en rend-elle compte ?" for i in range(50)]
    return chunks, infos, questions


@dataclass
class Archive:
    """Hold a loaded archive and its questions with gold ids."""

    retriever: InMemoryRetriever
    questions: list[tuple[str, list[str]]]


def load(corpus: str, qa: str, words: int = 1000) -> Archive:
    """Load a JSONL corpus (doc_id, collection, source, date, text) and questions (gold_ids)."""
    chunks: list[Hit] = []
    infos: dict[str, SubCorpusInfo] = {}
    with open(corpus, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            doc = json.loads(line)
            slug = doc["collection"]
            infos.setdefault(slug, SubCorpusInfo(slug, doc.get("source", slug),
                                                 doc.get("source", "")))
            tokens = doc["text"].split()
            for start in range(0, max(1, len(tokens)), words):
                chunks.append(chunk(len(chunks) + 1, number, doc["doc_id"], slug, doc.get("date"),
                                    " ".join(tokens[start:start + words])))
    with open(qa, encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle]
    return Archive(InMemoryRetriever(chunks, list(infos.values())),
                   [(row["question"], row["gold_ids"]) for row in rows])


def scores(ranked: list[str], gold: list[str], k: int = 10) -> tuple[float, float]:
    """Return recall@k and multi-gold MRR."""
    recall = len(set(ranked[:k]) & set(gold)) / len(gold)
    mrr = sum(1 / (ranked.index(g) + 1) if g in ranked else 0.0 for g in gold) / len(gold)
    return recall, mrr


def main() -> None:
    """Print the median engine time per question, and recall when a corpus is given."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--questions", type=int, default=50)
    parser.add_argument("--corpus")
    parser.add_argument("--qa")
    args = parser.parse_args()
    if args.corpus and args.qa:
        archive = load(args.corpus, args.qa)
        retriever, questions = archive.retriever, archive.questions[: args.questions]
    else:
        chunks, infos, texts = synthetic_archive()
        retriever = InMemoryRetriever(chunks, infos)
        questions = [(q, []) for q in texts[: args.questions]]
    policies: list[Policy] = [LLMPolicy(InstantModel()), OfflinePolicy()]
    for policy in policies:
        times, recalls, mrrs = [], [], []
        for question, gold in questions:
            sink = ListSink()
            result = run_investigation(question, policy=policy, retriever=retriever, sink=sink)
            times.append(result.counters.engine_seconds * 1000)
            if gold:
                r, m = scores(result.ranked_document_keys, gold)
                recalls.append(r)
                mrrs.append(m)
        line = f"{policy.name}: median engine time {statistics.median(times):.1f} ms/question"
        if recalls:
            line += f", R@10 {statistics.mean(recalls):.3f}, MRR {statistics.mean(mrrs):.3f}"
        print(line, flush=True)
    if questions and questions[0][1]:
        recalls, mrrs = [], []
        for question, gold in questions:
            hits = retriever.search(SearchRequest("bm25", question, limit=400))
            ranked = list(dict.fromkeys(hit.document_key for hit in hits))
            r, m = scores(ranked, gold)
            recalls.append(r)
            mrrs.append(m)
        print(f"plain BM25 (same index): R@10 {statistics.mean(recalls):.3f}, "
              f"MRR {statistics.mean(mrrs):.3f}")


if __name__ == "__main__":
    main()
