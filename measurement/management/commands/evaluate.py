"""Evaluate retrieval systems on a questions file: recall@k, MRR, per type and per sub-corpus."""

from __future__ import annotations

import shlex
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from archive.models import CorpusRevision, Document
from common.document_keys import document_key, split_document_key
from common.generated_docs import (
    GeneratedBlockError,
    check_generated_block,
    shown_path,
    write_generated_block,
)
from measurement.evaluation.metadata import embedding_models, git_revision
from measurement.evaluation.pool import describe_pool, pool_phrase
from measurement.evaluation.questions import (
    QuestionsError,
    check_gold_ids,
    load_pool,
    load_questions,
)
from measurement.evaluation.records import RunContext
from measurement.evaluation.report import summary_markdown, write_comparison, write_system
from measurement.evaluation.runner import evaluate_system
from measurement.evaluation.systems import EvalConfig, preview_prompts, system_names
from retrieval.analysis import DEFAULT_OPTIONS
from retrieval.bm25.indexer import prepare_index
from retrieval.bm25.store import engine_name
from retrieval.channels import bm25
from retrieval.channels.substring import FUZZY_THRESHOLD
from retrieval.selectors import genre_by_sub_corpus
from retrieval.warm_start import CHANNEL_POOL, DEFAULT_WEIGHTS


class Command(BaseCommand):
    help = "Evaluate retrieval systems on a questions JSONL file and write results to a directory."

    def add_arguments(self, parser):
        parser.add_argument("--questions", required=True, type=Path)
        parser.add_argument("--system", action="append", required=True, dest="systems",
                            help=f"repeatable; registered: {', '.join(system_names())}")
        parser.add_argument("--out", type=Path, help="results directory (not with --dry-run)")
        parser.add_argument("--limit", type=int, default=None, help="first N questions only")
        parser.add_argument("--every", type=int, default=1,
                            help="every Kth question only (a sample across the file's types)")
        parser.add_argument("--k", default="2,5,10,20", help="comma-separated cut-offs")
        parser.add_argument("--sub-corpus", action="append", dest="sub_corpora",
                            help="restrict the candidate pool to these sub-corpora (repeatable)")
        parser.add_argument("--pool", type=Path, default=None,
                            help="restrict the candidate pool to the doc_ids of a corpus JSONL "
                                 "(e.g. the gold-only corpus.jsonl); default: the whole archive, "
                                 "the realistic pool once the distractors are ingested")
        parser.add_argument("--keep", type=int, default=20,
                            help="ranked ids stored per question in results.json")
        parser.add_argument("--workers", type=int, default=1,
                            help="questions run at once (threads); useful for LLM systems")
        parser.add_argument("--no-progress", action="store_true")
        parser.add_argument("--dry-run", action="store_true",
                            help="print the prompts of the first question (after --limit) "
                                 "without calling any model, then stop")
        parser.add_argument("--write-doc", type=Path, action="append", default=[],
                            help="write the summary table into this document (repeatable)")
        parser.add_argument("--doc-block", default="evaluation",
                            help="name of the generated block the table replaces")

    def handle(self, *args, **options):
        try:
            ks = sorted({int(k) for k in options["k"].split(",") if k.strip()})
        except ValueError as exc:
            raise CommandError(f"--k must be comma-separated integers: {exc}") from exc
        if not ks or min(ks) < 1:
            raise CommandError("--k needs positive cut-offs")
        if not options["out"] and not options["dry_run"]:
            raise CommandError("--out is required (results directory), except with --dry-run")
        ks = sorted(set(ks) | {10})  # recall@10 feeds the sub-corpus and miss figures
        unknown = [s for s in options["systems"] if s not in system_names()]
        if unknown:
            raise CommandError(f"unknown system(s) {', '.join(unknown)}; "
                               f"registered: {', '.join(system_names())}")
        try:
            for doc in options["write_doc"]:  # before a long run, not after it
                check_generated_block(doc, options["doc_block"])
        except GeneratedBlockError as exc:
            raise CommandError(str(exc)) from exc
        path: Path = options["questions"]
        try:
            questions = load_questions(path)
            rows = Document.objects.values_list("id", "sub_corpus__slug", "external_id")
            key_to_id = {document_key(slug, ext): pk for pk, slug, ext in rows}
            check_gold_ids(questions, set(key_to_id), path.name)
            document_ids, pool_label = None, "whole archive"
            pool_keys = set(key_to_id)
            if options["pool"]:
                listed = load_pool(options["pool"])
                found = {key: key_to_id[key] for key in listed if key in key_to_id}
                missing = sorted(set(listed) - set(found))
                if missing:
                    raise QuestionsError(f"{options['pool'].name}: {len(missing)} doc_id(s) not "
                                         f"in the archive, e.g. {missing[0]}")
                document_ids = tuple(sorted(found.values()))
                pool_label = f"{len(document_ids)} documents of {options['pool'].name}"
                pool_keys = set(found)
        except QuestionsError as exc:
            raise CommandError(str(exc)) from exc
        sub_corpora = tuple(options["sub_corpora"]) if options["sub_corpora"] else None
        if sub_corpora:
            pool_label += f", sub-corpora {', '.join(sub_corpora)}"
            pool_keys = {key for key in pool_keys if split_document_key(key)[0] in sub_corpora}
        # Gold of the whole file, not of --limit's slice: the pool's kind does not depend on it.
        pool = describe_pool(pool_label, pool_keys, (g for q in questions for g in q.gold_keys))
        if options["every"] < 1:
            raise CommandError("--every needs a positive step")
        questions = questions[:: options["every"]]
        if options["limit"]:
            questions = questions[: options["limit"]]
        config = EvalConfig(sub_corpora=sub_corpora, document_ids=document_ids)
        if options["dry_run"]:
            if not questions:
                raise CommandError("no question to preview")
            for name in options["systems"]:
                try:
                    preview_prompts(name, questions[0], config, self.stdout.write)
                except KeyError as exc:
                    raise CommandError(exc.args[0]) from exc
            return
        sub_corpus_of = {key: split_document_key(key)[0] for q in questions for key in q.gold_keys}
        genre_of = genre_by_sub_corpus()
        context = RunContext(
            git_revision=git_revision(),
            corpus_revision=CorpusRevision.current(),
            embedding_model=embedding_models(),
            questions_file=path.name,
            question_selection={"every": options["every"], "limit": options["limit"]},
            pool=pool,
            settings={
                "pool": pool_label,
                "rrf_k": 60,
                "rrf_weights": dict(DEFAULT_WEIGHTS),
                "bm25_k1_b": [bm25.K1, bm25.B],
                "bm25_engine": engine_name(),
                "channel_pool": CHANNEL_POOL,
                "bm25_analyzer": DEFAULT_OPTIONS.__dict__,
                "embedding_provider": settings.TRACE_EMBEDDING_PROVIDER,
                "temporal_half_life_days": settings.TRACE_TEMPORAL_HALF_LIFE_DAYS,
                "substring_threshold": FUZZY_THRESHOLD,
                "depth": config.depth,
            },
        )
        # Every system reading the maintained BM25 index sees the committed archive whole.
        prepare_index()
        out: Path = options["out"]
        several = len(options["systems"]) > 1
        results = []
        for name in options["systems"]:
            result = evaluate_system(
                name, questions, config, ks=ks, sub_corpus_of=sub_corpus_of, genre_of=genre_of,
                progress=not options["no_progress"], keep_ranked=options["keep"],
                workers=max(1, options["workers"]), context=context,
            )
            target = out / _dirname(name) if several else out
            write_system(result, target)
            results.append(result)
            o = result.overall
            self.stdout.write(
                f"{name} [{pool_phrase(pool)}]: "
                f"R@5 {o.recall[5]:.3f}  R@10 {o.recall[10]:.3f}  "
                f"MRR {o.mrr:.3f}  median {o.latency_median_ms:.1f} ms  -> {target}"
                if 5 in o.recall else f"{name}: R@10 {o.recall[10]:.3f} -> {target}"
            )
        if several:
            write_comparison(results, out)
            self.stdout.write(f"comparison -> {out / 'results.md'}")
        for doc in options["write_doc"]:
            try:
                write_generated_block(doc, options["doc_block"], summary_markdown(results),
                                      command=_command_line(options))
            except GeneratedBlockError as exc:
                raise CommandError(str(exc)) from exc
            self.stdout.write(f"summary -> {doc} (block {options['doc_block']})")


def _command_line(options: dict) -> str:
    """Say how to measure this again, naming files by their place in the repository."""
    def shown(path: Path) -> str:
        return shown_path(path, Path(settings.BASE_DIR))

    words = ["manage.py", "evaluate", "--questions", shown(options["questions"])]
    for system in options["systems"]:
        words += ["--system", system]
    if options["pool"]:
        words += ["--pool", shown(options["pool"])]
    for sub_corpus in options["sub_corpora"] or []:
        words += ["--sub-corpus", sub_corpus]
    if options["limit"]:
        words += ["--limit", str(options["limit"])]
    words += ["--k", options["k"], "--out", shown(options["out"])]
    words += [arg for doc in options["write_doc"] for arg in ("--write-doc", shown(doc))]
    words += ["--doc-block", options["doc_block"]]
    return shlex.join(words)


def _dirname(system: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in system)
