"""Build and measure one archive size, stage by stage; a finished stage is never run again.

Stages: generate the input files; ingest without embedding (COPY, resumable); embed every chunk
(worker processes); build the HNSW index after the load; first answer of each channel (index
builds); database and index sizes; query latency per channel and filter; dense filtered recall
and plans; freshness of a 1,000-document ingest with searches running; one offline
investigation; peak memory.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.db import connection

from agent.engine.investigation import run_investigation
from agent.engine.offline import OfflinePolicy
from agent.engine.sinks import ListSink
from agent.investigations.retriever import ArchiveRetriever
from archive import outbox
from archive.embedding_backfill import chunks_embed_bulk
from archive.embeddings import get_provider
from archive.models import Chunk, Document
from archive.outbox import apply_pending
from archive.services import ingest_file
from archive.vector_index import vector_index_build, vector_index_drop, vector_index_exists
from measurement.evaluation.metadata import git_revision
from measurement.scale.corpus import SeedCorpus, write_archive, write_arrivals
from measurement.scale.dense_check import filtered_recall
from measurement.scale.freshness import measure_freshness
from measurement.scale.monitor import RssMonitor
from measurement.scale.queries import (
    TEXT_CHANNELS,
    channel_latencies,
    filters,
    read_questions,
    request_for,
)
from measurement.scale.results import SizeResults
from retrieval import channels as registry
from retrieval import vocabulary
from trace_site.embedded import postgres_pid


@dataclass(frozen=True)
class SizePlan:
    """What to build and how: the target size and the inputs of the measures."""

    chunks: int
    work_dir: Path
    corpus: Path
    questions: Path
    query_count: int = 40
    recall_queries: int = 10
    arrivals: int = 1000
    workers: int = 2
    provider: str = "hash"
    maintenance_work_mem: str = "2GB"


def _postgres_pid() -> int | None:
    if not settings.TRACE_EMBEDDED_POSTGRES:
        return None
    return postgres_pid(Path(settings.TRACE_DATA_DIR))


def _directory_bytes(path: Path) -> int:
    if not path.exists():
        return 0
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def database_sizes() -> dict:
    """Return the database, table and index sizes (MB) and the BM25 index directory's."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_database_size(current_database())")
        total = cursor.fetchone()[0]
        cursor.execute(
            "SELECT c.relname, c.relkind, pg_total_relation_size(c.oid), pg_relation_size(c.oid) "
            "FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = 'public' AND c.relkind IN ('r', 'i') "
            "AND (c.relname LIKE 'archive_%%' OR c.relname LIKE 'retrieval_%%' "
            "OR c.relname LIKE 'chunk_%%' OR c.relname LIKE 'document_%%' "
            "OR c.relname LIKE 'vocabulary_%%')"
        )
        rows = cursor.fetchall()
    mb = 2**20
    return {
        "database_mb": round(total / mb, 1),
        "tables_mb": {name: round(size / mb, 1) for name, kind, size, _ in rows if kind == "r"},
        "indexes_mb": {name: round(size / mb, 1) for name, kind, _, size in rows if kind == "i"},
        "bm25_dir_mb": round(_directory_bytes(Path(settings.TRACE_BM25_DIR)) / mb, 1),
    }


def _archive_counts() -> dict:
    return {"documents": Document.objects.count(), "chunks": Chunk.objects.count()}


def _first_answers(question: str) -> dict:
    """Time each channel's first answer after the load (any index it builds on first use)."""
    seconds = {}
    for channel in TEXT_CHANNELS:
        started = time.perf_counter()
        registry.get(channel).search(request_for(channel, question, filters(0)[0]))
        seconds[channel] = round(time.perf_counter() - started, 3)
    return {"first_answer_seconds": seconds}


def _vocabulary_rebuild_after_load() -> int:
    """Rebuild the substring vocabulary whole and drop the marks the rebuild covers.

    One rebuild from the committed rows reads each chunk once, where a bulk load's marks would
    be applied batch by batch. Returns the marks dropped.
    """
    return outbox.rebuild_covering(vocabulary.CONSUMER, lambda: vocabulary.refresh(force=True))


def _investigation(question: str) -> dict:
    sink = ListSink()
    started = time.perf_counter()
    result = run_investigation(question, policy=OfflinePolicy(), retriever=ArchiveRetriever(),
                               sink=sink)
    seconds = time.perf_counter() - started
    searches = sum(1 for e in sink.events if getattr(e, "kind", "") == "search")
    return {"engine_seconds": round(seconds, 2), "status": result.status,
            "searches": searches, "events": len(sink.events)}


def run_size(plan: SizePlan, log: Callable[[str], object] = print) -> SizeResults:
    """Run every stage of ``plan`` not finished yet; return the results."""
    plan.work_dir.mkdir(parents=True, exist_ok=True)
    results = SizeResults.load(plan.work_dir / "results.json")
    results.data.update({"chunks_target": plan.chunks, "provider": plan.provider,
                         "bm25_engine": settings.TRACE_BM25_ENGINE,
                         "workers": plan.workers, "cpu_count": os.cpu_count()})
    main_file = plan.work_dir / "archive.jsonl"
    arrivals_file = plan.work_dir / "arrivals.jsonl"
    # The timed questions, then as many others to warm the caches up before timing them.
    asked = read_questions(plan.questions, 2 * plan.query_count)
    questions, warm_up = asked[: plan.query_count], asked[plan.query_count :]
    provider = get_provider(plan.provider)
    monitor = RssMonitor(own_pid=os.getpid(), postgres_pid=_postgres_pid()).start()

    def stage(name: str, run: Callable[[], dict]) -> None:
        if results.done(name):
            log(f"[{plan.chunks}] {name}: done earlier")
            return
        log(f"[{plan.chunks}] {name} …")
        monitor.reset()
        started = time.perf_counter()
        figures = run()
        figures["stage_seconds"] = round(time.perf_counter() - started, 2)
        figures["code_revision"] = git_revision()
        figures["peak_rss_mb"] = monitor.peaks_mb()
        results.record(name, figures)
        log(f"[{plan.chunks}] {name}: {figures}")

    def generate() -> dict:
        source = SeedCorpus.from_corpus(plan.corpus)
        figures = write_archive(source, main_file, chunks=plan.chunks)
        figures["arrivals"] = write_arrivals(source, arrivals_file, documents=plan.arrivals)
        figures["chunks_per_document"] = round(
            figures["chunks_estimated"] / figures["documents"], 2)
        figures["bytes"] = main_file.stat().st_size
        return figures

    def ingest() -> dict:
        # Build the vector graph once after the load, not row by row during it.
        if Chunk.objects.filter(embedding__isnull=False).count() == 0:
            vector_index_drop()
        started = time.perf_counter()
        report = ingest_file(path=main_file, embed=False, commit_every_batch=True,
                             batch_size=200, progress=True, apply_indexes=False)
        seconds = time.perf_counter() - started
        # A bulk load leaves the derived indexes to one catch-up after it (timed on its own).
        caught_up = time.perf_counter()
        vocabulary_rebuilt = _vocabulary_rebuild_after_load()
        indexed = apply_pending()
        return {"created": report.created, "unchanged_skipped": report.unchanged,
                "index_catch_up_seconds": round(time.perf_counter() - caught_up, 2),
                "indexed": indexed, "vocabulary_rebuilt_whole": vocabulary_rebuilt,
                "chunks_written": report.chunks_written, "seconds": round(seconds, 2),
                "write_seconds": round(report.seconds, 2),
                "chunks_per_second": round(report.chunks_written / seconds, 1),
                "resumed": report.unchanged > 0, **_archive_counts()}

    def embed() -> dict:
        chunks, seconds = chunks_embed_bulk(provider=provider, workers=plan.workers)
        return {"chunks_embedded": chunks, "seconds": round(seconds, 2),
                "chunks_per_second": round(chunks / seconds, 1) if seconds else None}

    def vector_index() -> dict:
        existed = vector_index_exists()
        seconds = vector_index_build(maintenance_work_mem=plan.maintenance_work_mem)
        return {"seconds": round(seconds, 2), "existed": existed}

    stage("generate", generate)
    stage("ingest", ingest)
    stage("embed", embed)
    stage("vector_index", vector_index)
    stage("first_answers", lambda: _first_answers(questions[0]))
    stage("sizes", lambda: {**database_sizes(), **_archive_counts()})
    stage("latency", lambda: channel_latencies(questions, warm_up))
    stage("dense_filtered", lambda: filtered_recall(questions[: plan.recall_queries]))
    stage("freshness", lambda: measure_freshness(arrivals=arrivals_file, questions=questions,
                                                 provider=plan.provider, workers=plan.workers))
    stage("investigation", lambda: _investigation(questions[0]))
    monitor.stop()
    results.data["archive"] = _archive_counts()
    results.data["complete"] = True
    results.save()
    return results

