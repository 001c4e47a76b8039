"""The one BM25 writer: applies outbox marks, repairs a missing or partial index, rebuilds in full.

Every write goes through `apply_documents` under the outbox's writer lock (a Postgres advisory
lock shared by every process), so a second writer waits instead of failing or losing a write.
Queries never call anything here: they read the last commit.
"""

from __future__ import annotations

import logging
import shutil
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from django.db import connection

from archive import outbox
from common.document_keys import document_key
from retrieval.analysis import DEFAULT_OPTIONS, AnalyzerOptions, field_language
from retrieval.bm25 import store
from retrieval.bm25.base import IndexChanges, IndexCorrupt, IndexedChunk, TextIndex, WordIndex
from retrieval.vocabulary import FOLD_SQL, MAX_WORD_LENGTH, WORD_SPLIT

logger = logging.getLogger(__name__)

CONSUMER = "bm25"
# Documents read from Postgres and written per index commit during a rebuild or a repair.
BATCH_DOCUMENTS = 500


# A chunk's distinct folded words, split exactly as the vocabulary splits them (same SQL).
_WORDS_SQL = (
    f"array(SELECT DISTINCT w FROM regexp_split_to_table({FOLD_SQL.format('c.text')}, "
    f"'{WORD_SPLIT}') AS t(w) WHERE w <> '' AND length(w) <= {MAX_WORD_LENGTH})"
)


def _chunks_of(document_ids: list[int], *, with_words: bool) -> list[IndexedChunk]:
    words = _WORDS_SQL if with_words else "'{}'::text[]"
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT c.id, d.id, s.slug, d.external_id, s.language, d.date, c.text, {words} "
            "FROM archive_chunk c JOIN archive_document d ON d.id = c.document_id "
            "JOIN archive_subcorpus s ON s.id = d.sub_corpus_id "
            "WHERE d.id = ANY(%s) ORDER BY c.id",
            [document_ids],
        )
        return [IndexedChunk(chunk_id, doc_id, document_key(slug, external_id), slug,
                             field_language(language), date.toordinal() if date else None, text,
                             tuple(chunk_words))
                for chunk_id, doc_id, slug, external_id, language, date, text, chunk_words
                in cursor.fetchall()]


def apply_documents(index: TextIndex, document_ids: list[int]) -> int:
    """Replace the documents' chunks by their committed ones (none if deleted); commit."""
    if not document_ids:
        return 0
    chunks = _chunks_of(document_ids, with_words=isinstance(index, WordIndex))
    index.apply(IndexChanges(tuple(document_ids), tuple(chunks)))
    return len(document_ids)


def _batches(ids: Iterable[int], size: int) -> Iterator[list[int]]:
    batch: list[int] = []
    for value in ids:
        batch.append(value)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def database_documents() -> dict[int, int]:
    """Return the chunk count of every document in Postgres."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT document_id, count(*) FROM archive_chunk GROUP BY document_id")
        return dict(cursor.fetchall())


@dataclass(frozen=True)
class RepairReport:
    """What a start-up check did to the index."""

    action: str  # "none", "created", "rebuilt" or "repaired"
    documents_written: int
    reason: str = ""


def rebuild(options: AnalyzerOptions = DEFAULT_OPTIONS, engine: str | None = None) -> int:
    """Build the index in full beside the live one, then swap it in; return documents written."""
    engine = engine or store.engine_name()
    target = store.index_path(options, engine)
    staging = target.with_name(target.name + ".building")
    shutil.rmtree(staging, ignore_errors=True)
    index = store.create(staging, engine, options)
    written = 0
    try:
        for batch in _batches(sorted(database_documents()), BATCH_DOCUMENTS):
            written += apply_documents(index, batch)
    finally:
        index.close()
    store.close_all()
    old = target.with_name(target.name + ".old")
    shutil.rmtree(old, ignore_errors=True)
    if target.exists():
        target.rename(old)
    staging.rename(target)
    shutil.rmtree(old, ignore_errors=True)
    return written


def repair(options: AnalyzerOptions = DEFAULT_OPTIONS, engine: str | None = None) -> RepairReport:
    """Make the index match Postgres: rebuild if missing or unreadable, else fix the difference.

    The difference is every document whose chunk count differs between Postgres and the index,
    or that one of them lacks; only those are re-indexed.
    """
    engine = engine or store.engine_name()
    path = store.index_path(options, engine)
    if not store.exists(path, engine):
        return RepairReport("created", rebuild(options, engine), "no index")
    index = store.opened(options, engine)
    try:
        indexed = index.documents_indexed()
    except IndexCorrupt as exc:
        logger.warning("BM25 index unreadable, rebuilding it: %s", exc)
        return RepairReport("rebuilt", rebuild(options, engine), str(exc))
    wanted = database_documents()
    differing = sorted(
        doc_id for doc_id in wanted.keys() | indexed.keys()
        if wanted.get(doc_id) != indexed.get(doc_id)
    )
    written = sum(apply_documents(index, batch) for batch in _batches(differing, BATCH_DOCUMENTS))
    if not written:
        return RepairReport("none", 0)
    return RepairReport("repaired", written, f"{written} document(s) differed")


def prepare_index(options: AnalyzerOptions = DEFAULT_OPTIONS,
                  engine: str | None = None) -> RepairReport:
    """Bring an index variant (another analyzer or engine) in line with Postgres, for evaluation."""
    engine = engine or store.engine_name()
    maintained = options == DEFAULT_OPTIONS and engine == store.engine_name()
    lock = CONSUMER if maintained else f"{CONSUMER}:{engine}:{options.signature()}"
    with outbox.writer_lock(lock):
        return repair(options, engine)


def drain() -> int:
    """Apply this index's outbox marks (the registered consumer); create the index if missing."""
    built = 0

    def build() -> None:
        nonlocal built
        built = repair().documents_written

    if not store.exists(store.index_path(), store.engine_name()):
        # A bulk load leaves a mark per document: the build covers those committed before it.
        outbox.rebuild_covering(CONSUMER, build)
    index = store.opened()
    return built + outbox.drain(CONSUMER, lambda ids: apply_documents(index, ids))


def bring_up_to_date() -> RepairReport:
    """Run at start-up: repair the index, then apply whatever the outbox still holds."""
    with outbox.writer_lock(CONSUMER):
        report = repair()
        drained = drain()
    if drained:
        return RepairReport(report.action if report.action != "none" else "repaired",
                            report.documents_written + drained, report.reason or "outbox replay")
    return report


def state() -> str:
    """Describe the index for /healthz without building or changing anything."""
    engine = store.engine_name()
    path = store.index_path()
    backlog = outbox.backlog().get(CONSUMER, 0)
    if not store.exists(path, engine):
        with connection.cursor() as cursor:
            cursor.execute("SELECT EXISTS (SELECT 1 FROM archive_chunk)")
            has_chunks = cursor.fetchone()[0]
        if not has_chunks:
            return f"ok: {engine}, nothing to index yet"
        return (f"missing: no {engine} index (built at the next start or by "
                f"`manage.py reindex`); {backlog} document(s) waiting in the outbox")
    try:
        chunks = store.opened().chunk_count()
    except IndexCorrupt as exc:
        return f"corrupt: {exc} (repaired at the next start or by `manage.py reindex --full`)"
    return f"ok: {engine}, {chunks} chunks indexed; {backlog} document(s) waiting in the outbox"
