"""Archive writes: stream documents in, replace their chunks, embed them, bump the revision."""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Iterator
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import psycopg
from django.db import DatabaseError, connection, transaction
from django.db.models import F
from tqdm import tqdm

from archive.bulk_writes import ChunkRow, chunks_copy, document_ids_allocate, documents_copy
from archive.chunk_pool import POOL_MIN_RECORDS, ChunkPool, Span, chunks_of
from archive.chunking import TextChunk, chunk_text, content_sha256
from archive.embedding_backfill import chunks_embed
from archive.embeddings import EmbeddingProvider, get_provider
from archive.embeddings.cache import cache_release, known_vectors
from archive.embeddings.pool import EmbeddingPool
from archive.importers import DocumentRecord, RecordError, checked_records, scan_file
from archive.importers.records import FolderOptions
from archive.layout import layout_span
from archive.models import Chunk, ChunkCorrection, CorpusRevision, Document, SubCorpus
from archive.outbox import apply_pending_logged, record_changes
from archive.tasks import embed_document
from common.document_keys import document_key_sql
from common.search import SubCorpusInfo
from common.user_text import text_problem

ON_ERROR = ("refuse", "skip")
# What a write of an unchecked value raises: the database's refusal, or the driver's when a
# string cannot be encoded for it (a lone surrogate, or a NUL inside a COPY stream).
WRITE_ERRORS = (DatabaseError, psycopg.Error, UnicodeEncodeError)
# An ingest that wrote this many chunks or more refreshes the planner statistics at its end.
ANALYZE_AFTER_CHUNKS = 1_000

logger = logging.getLogger(__name__)


class IngestRefused(Exception):
    """The import was refused because of bad records; nothing was written."""

    def __init__(self, path: Path, errors: list[RecordError], lines: int = 0) -> None:
        self.errors = errors
        shown = "\n".join(f"  {e}" for e in errors[:50])
        more = f"\n  … and {len(errors) - 50} more" if len(errors) > 50 else ""
        of = f" of {lines}" if lines else ""
        super().__init__(
            f"{path}: {len(errors)}{of} bad record(s); import refused, nothing written "
            f"(use --on-error skip to import the valid records):\n{shown}{more}"
        )


class IngestFailed(Exception):
    """The database refused a write; the import was rolled back and nothing was written."""


@dataclass
class IngestReport:
    path: str = ""
    format: str = ""
    lines: int = 0  # non-blank input lines (or files): read + skipped
    read: int = 0
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    errors: list[RecordError] = field(default_factory=list)
    chunks_written: int = 0
    chunks_embedded: int = 0
    embeddings_computed: int = 0
    provider: str = ""
    seconds: float = 0.0
    revision: int = 0
    # Documents each derived index applied after the ingest committed (empty when none ran).
    indexed: dict[str, int] = field(default_factory=dict)

    @property
    def changed(self) -> int:
        return self.created + self.updated

    def summary(self) -> str:
        """Describe the outcome in one paragraph."""
        lines = [
            f"{self.lines} records in the input ({self.format}): {self.read} read "
            f"({self.created} created, {self.updated} updated, {self.unchanged} unchanged), "
            f"{len(self.errors)} skipped.",
            f"{self.chunks_written} chunks written; {self.chunks_embedded} chunks embedded"
            + (f" with {self.provider} ({self.embeddings_computed} computed, "
               f"{self.chunks_embedded - self.embeddings_computed} from cache)."
               if self.provider else " (embedding off)."),
            f"Corpus revision {self.revision}; {self.seconds:.1f} s.",
        ]
        if self.indexed:
            lines.append("Indexes brought up to date: " + ", ".join(
                f"{name} {count} document(s)" for name, count in self.indexed.items()) + ".")
        lines += [f"  skipped {e}" for e in self.errors]
        return "\n".join(lines)


def corpus_revision_bump() -> int:
    """Increment the corpus revision (row 1, created when missing) and return it."""
    CorpusRevision.objects.get_or_create(pk=1)
    CorpusRevision.objects.filter(pk=1).update(revision=F("revision") + 1)
    return CorpusRevision.objects.get(pk=1).revision


def sub_corpus_ensure(*, info: SubCorpusInfo) -> SubCorpus:
    """Return the sub-corpus ``info.slug``, creating it from ``info`` when new."""
    sub_corpus, _ = SubCorpus.objects.get_or_create(
        slug=info.slug,
        defaults={"name": info.name, "genre": info.genre, "description": info.description,
                  "language": info.language},
    )
    return sub_corpus


def _document_fields(record: DocumentRecord) -> dict:
    return {
        "title": record.title[:500], "publication": record.publication[:300],
        "date": record.date, "date_precision": record.date_precision, "page": record.page[:100],
        "url": record.url[:500], "iiif_url": record.iiif_url, "metadata": record.metadata,
        "text": record.text,
        "content_hash": record.content_hash(), "ocr_confidence": record.ocr_confidence,
        "layout": record.layout.to_json() if record.layout is not None else None,
    }


def _chunk_confidence(record: DocumentRecord, char_start: int, char_end: int) -> float | None:
    """Mean OCR confidence of the words of ``record`` starting in the range (None: no layout)."""
    if record.layout is None:
        return None
    return layout_span(record.layout, char_start, char_end).confidence


def _chunk_confidences_refresh(document_id: int, record: DocumentRecord) -> None:
    """Give the kept chunks of a document whose text is unchanged its new word confidences."""
    chunks = list(Chunk.objects.filter(document_id=document_id)
                  .only("pk", "char_start", "char_end", "ocr_confidence"))
    changed = []
    for chunk in chunks:
        confidence = _chunk_confidence(record, chunk.char_start, chunk.char_end)
        if confidence != chunk.ocr_confidence:
            chunk.ocr_confidence = confidence
            changed.append(chunk)
    Chunk.objects.bulk_update(changed, ["ocr_confidence"], batch_size=500)


def ingest_file(
    *, path: str | Path, fmt: str = "auto", metadata_csv: str | Path | None = None,
    on_error: str = "refuse", embed: bool = True,
    provider: EmbeddingProvider | str | None = None, batch_size: int = 25, progress: bool = False,
    commit_every_batch: bool | None = None, workers: int = 0, apply_indexes: bool = True,
    defaults: FolderOptions | None = None,
) -> IngestReport:
    """Import ``path``, streaming it twice: every record is checked before anything is written.

    With ``on_error="refuse"`` one bad record refuses the whole file. By default its writes then
    run in a single transaction, so a database error leaves the archive (and its revision) as it
    was; ``commit_every_batch=True`` commits batch by batch instead, so a killed import keeps
    what it wrote and a rerun skips it. With ``"skip"`` the good records are written batch by
    batch and the bad ones listed in the report. ``workers`` embedding processes (0: embed in
    this process) compute vectors while earlier batches are written. The derived indexes apply
    each batch after its commit; with ``apply_indexes=False`` (a bulk load) the marks wait in the
    outbox for one catch-up afterwards (``archive.outbox.apply_pending``, or the next start).
    """
    if on_error not in ON_ERROR:
        raise ValueError(f"on_error must be one of {ON_ERROR}")
    path = Path(path)
    scan = scan_file(path, fmt=fmt, metadata_csv=Path(metadata_csv) if metadata_csv else None,
                     defaults=defaults)
    if scan.errors and on_error == "refuse":
        raise IngestRefused(path, scan.errors, scan.lines)
    if isinstance(provider, str):
        provider = get_provider(provider)
    provider = (provider or get_provider()) if embed else None
    report = IngestReport(path=str(path), format=scan.format, errors=list(scan.errors),
                          lines=scan.lines, provider=provider.name if provider else "")
    records = (r for r in checked_records(scan) if isinstance(r, DocumentRecord))
    settings = IngestSettings(
        batch_size=batch_size, skip_refused=on_error == "skip", workers=workers,
        progress=progress, apply_indexes=apply_indexes,
    )
    if on_error == "skip" or commit_every_batch:
        return ingest_stream(records=records, total=scan.records, provider=provider,
                             report=report, settings=settings)
    try:
        with transaction.atomic():
            return ingest_stream(records=records, total=scan.records, provider=provider,
                                 report=report, settings=settings)
    except WRITE_ERRORS as exc:
        raise IngestFailed(
            f"{path}: the database refused a write ({type(exc).__name__}: {exc}); "
            "the import was rolled back and nothing was written."
        ) from exc


@dataclass(frozen=True)
class IngestSettings:
    batch_size: int = 25
    skip_refused: bool = False
    workers: int = 0
    progress: bool = False
    apply_indexes: bool = True
    # Processes chunking the next batches while one is written (large ingests only).
    chunk_workers: int = 1
    # A batch also closes once its texts reach this size, so 7 MB documents keep memory flat.
    batch_chars: int = 8_000_000


@dataclass
class _PreparedBatch:
    """A batch read from the input: what to write, and the vectors being computed for it."""

    records: list[DocumentRecord]
    chunks: dict[str, list[TextChunk]]  # by document key, for new or re-texted documents
    hashes: dict[str, list[str]]  # the content hash of each of those chunks
    # Chunking under way in the chunk pool: the keys of the records it was given, in order.
    chunking: Future[list[list[Span]]] | None = None
    chunking_keys: list[str] = field(default_factory=list)
    reused: dict[str, np.ndarray] = field(default_factory=dict)
    from_table: set[str] = field(default_factory=set)
    computing: list[str] = field(default_factory=list)  # hashes, in the order of `futures`
    futures: list[Future[np.ndarray]] = field(default_factory=list)
    to_embed_documents: list[int] = field(default_factory=list)  # unchanged, lacking vectors

    def settle_chunks(self) -> None:
        """Wait for the chunking under way, and keep its chunks and hashes."""
        if self.chunking is None:
            return
        texts = {r.key: r.text for r in self.records}
        for key, spans in zip(self.chunking_keys, self.chunking.result(), strict=True):
            self.chunks[key], self.hashes[key] = chunks_of(texts[key], spans)
        self.chunking = None


def _batches(records: Iterator[DocumentRecord], settings: IngestSettings
             ) -> Iterator[list[DocumentRecord]]:
    batch: list[DocumentRecord] = []
    chars = 0
    for record in records:
        batch.append(record)
        chars += len(record.text)
        if len(batch) >= settings.batch_size or chars >= settings.batch_chars:
            yield batch
            batch, chars = [], 0
    if batch:
        yield batch


def _stored_state(records: list[DocumentRecord], model: str | None) -> dict[str, tuple]:
    """Map key -> (id, content hash, whether some chunk lacks a vector of ``model``)."""
    pairs = [(r.sub_corpus.slug, r.external_id) for r in records]
    lacking = ("EXISTS (SELECT 1 FROM archive_chunk c WHERE c.document_id = d.id AND "
               "(c.embedding IS NULL OR c.embedding_model <> %s))") if model else "false"
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {document_key_sql('s.slug', 'd.external_id')}, d.id, d.content_hash, "
            f"{lacking} FROM archive_document d JOIN archive_subcorpus s ON s.id = d.sub_corpus_id "
            "JOIN unnest(%s::text[], %s::text[]) AS k(slug, external_id) "
            "ON k.slug = s.slug AND k.external_id = d.external_id",
            ([model] if model else []) + [[p[0] for p in pairs], [p[1] for p in pairs]],
        )
        return {row[0]: row[1:] for row in cursor.fetchall()}


def _prepare(records: list[DocumentRecord], pool: EmbeddingPool | None,
             chunker: ChunkPool) -> _PreparedBatch:
    """Start chunking what must be written, and embedding what no stored vector covers."""
    model = pool.provider.name if pool else None
    stored = _stored_state(records, model)
    batch = _PreparedBatch(records=records, chunks={}, hashes={})
    to_chunk: list[DocumentRecord] = []
    for record in records:
        state = stored.get(record.key)
        if state is not None and state[1] == record.content_hash():
            if state[2]:
                batch.to_embed_documents.append(state[0])
            continue
        to_chunk.append(record)
    batch.chunking_keys = [r.key for r in to_chunk]
    batch.chunking = chunker.submit([r.text for r in to_chunk])
    if pool is None:
        return batch
    batch.settle_chunks()  # the texts to embed are the chunks'
    all_hashes = [h for hs in batch.hashes.values() for h in hs]
    batch.reused, batch.from_table = known_vectors(pool.provider.name, all_hashes)
    texts: dict[str, str] = {}
    for key, chunks in batch.chunks.items():
        for chunk, h in zip(chunks, batch.hashes[key], strict=True):
            if h not in batch.reused:
                texts.setdefault(h, chunk.text)
    batch.computing = list(texts)
    batch.futures = pool.submit(list(texts.values()))
    return batch


def _write_prepared(batch: _PreparedBatch, pool: EmbeddingPool | None,
                    report: IngestReport) -> list[int]:
    """Write ``batch`` in one transaction; return the ids of the documents it changed."""
    batch.settle_chunks()
    vectors = dict(batch.reused)
    if pool is not None:
        vectors.update(zip(batch.computing, EmbeddingPool.gather(batch.futures), strict=True))
    model = pool.provider.name if pool else ""
    changed: list[int] = []
    with transaction.atomic():
        infos = {r.sub_corpus.slug: r.sub_corpus for r in batch.records}
        sub_corpora = {slug: sub_corpus_ensure(info=info) for slug, info in infos.items()}
        stored_ids = [state[0] for state in _stored_state(batch.records, None).values()]
        existing = {
            (d.sub_corpus_id, d.external_id): d
            for d in Document.objects.select_for_update().filter(pk__in=stored_ids)
        }
        new: list[tuple[DocumentRecord, dict]] = []
        rechunked: list[tuple[int, DocumentRecord]] = []
        for record in batch.records:
            sub_corpus = sub_corpora[record.sub_corpus.slug]
            fields = _document_fields(record)
            document = existing.get((sub_corpus.pk, record.external_id))
            if document is None:
                new.append((record, {"sub_corpus_id": sub_corpus.pk,
                                     "external_id": record.external_id, **fields}))
                report.created += 1
                continue
            if document.content_hash == fields["content_hash"]:
                report.unchanged += 1
                continue
            text_changed = document.text != record.text
            scanned = document.layout is not None or record.layout is not None
            for name, value in fields.items():
                setattr(document, name, value)
            document.save()
            report.updated += 1
            changed.append(document.pk)
            if text_changed:
                # New text: the old chunks, spans and vectors no longer describe it.
                document.chunks.all().delete()
                rechunked.append((document.pk, record))
            elif scanned:
                # Same text, maybe new word confidences: the chunks stay, their means follow.
                _chunk_confidences_refresh(document.pk, record)
        ids = document_ids_allocate(len(new))
        for (_, row), pk in zip(new, ids, strict=True):
            row["id"] = pk
        documents_copy(row for _, row in new)
        changed += ids
        chunk_rows = [
            ChunkRow(document_id=pk, chunk=chunk, content_hash=h, vector=vectors.get(h),
                     model=model,
                     ocr_confidence=_chunk_confidence(record, chunk.char_start, chunk.char_end))
            for pk, record in [*((row["id"], r) for r, row in new), *rechunked]
            for chunk, h in _chunks_with_hashes(batch, record)
        ]
        report.chunks_written += chunks_copy(chunk_rows)
        # Dates and texts feed the derived indexes: every created or updated document is marked.
        record_changes(changed)
        report.chunks_embedded += sum(1 for row in chunk_rows if row.vector is not None)
        if pool is not None:
            report.embeddings_computed += len(batch.computing)
            cache_release(model, batch.from_table)
    return changed


def _chunks_with_hashes(batch: _PreparedBatch, record: DocumentRecord
                        ) -> list[tuple[TextChunk, str]]:
    if record.key not in batch.chunks:
        # Stored unchanged when the batch was read, changed by another import since: its
        # chunks get their vectors from chunks_embed after the write.
        batch.chunks[record.key] = chunk_text(record.text)
        batch.hashes[record.key] = [content_sha256(c.text) for c in batch.chunks[record.key]]
    return list(zip(batch.chunks[record.key], batch.hashes[record.key], strict=True))


def _write_or_each(batch: _PreparedBatch, pool: EmbeddingPool | None, report: IngestReport,
                   settings: IngestSettings) -> list[int]:
    """Write ``batch``; with ``skip_refused``, a batch the database refuses goes record by record.

    A record the database refuses on its own is skipped and listed in ``report.errors``.
    """
    batch.settle_chunks()
    if not settings.skip_refused:
        return _write_prepared(batch, pool, report)
    attempt = IngestReport()
    try:
        changed = _write_prepared(batch, pool, attempt)
    except WRITE_ERRORS:
        if len(batch.records) == 1:
            raise
    else:
        _add_counts(report, attempt)
        return changed
    vectors = dict(batch.reused)
    if pool is not None:
        vectors.update(zip(batch.computing, EmbeddingPool.gather(batch.futures), strict=True))
        report.embeddings_computed += len(batch.computing)
    changed = []
    for record in batch.records:
        one = _PreparedBatch(
            records=[record], chunks={k: v for k, v in batch.chunks.items() if k == record.key},
            hashes={k: v for k, v in batch.hashes.items() if k == record.key},
            reused=vectors, from_table=batch.from_table,
        )
        attempt = IngestReport()
        try:
            changed += _write_prepared(one, pool, attempt)
        except WRITE_ERRORS as exc:
            report.read -= 1
            report.errors.append(RecordError(
                record.line, f"refused by the database ({type(exc).__name__}): {exc}"))
        else:
            attempt.embeddings_computed = 0  # counted once for the whole batch above
            _add_counts(report, attempt)
    return changed


def _add_counts(report: IngestReport, batch: IngestReport) -> None:
    for name in ("created", "updated", "unchanged", "chunks_written", "chunks_embedded",
                 "embeddings_computed"):
        setattr(report, name, getattr(report, name) + getattr(batch, name))


def ingest_stream(
    *, records: Iterator[DocumentRecord], total: int, provider: EmbeddingProvider | None,
    report: IngestReport, settings: IngestSettings,
) -> IngestReport:
    """Write checked ``records`` batch by batch while later batches are chunked and embedded.

    Each batch is one transaction (a savepoint when the caller holds one); the corpus revision
    moves once, at the end, if anything changed.
    """
    started = time.perf_counter()
    bar = tqdm(total=total, desc="ingest", unit="doc", disable=not settings.progress,
               dynamic_ncols=True)
    pool = EmbeddingPool(provider, settings.workers) if provider is not None else None
    chunker = ChunkPool(settings.chunk_workers if total >= POOL_MIN_RECORDS else 0)
    # Batches prepared ahead of the one being written: embedding or chunking runs meanwhile.
    ahead = max(settings.workers if pool is not None else 0,
                1 if chunker.parallel else 0)
    in_flight: deque[_PreparedBatch] = deque()
    changed_any = False

    def write_oldest() -> None:
        nonlocal changed_any
        batch = in_flight.popleft()
        changed = _write_or_each(batch, pool, report, settings)
        changed_any = changed_any or bool(changed)
        if pool is not None and batch.to_embed_documents:
            # Unchanged documents may still lack vectors from this provider (a model switch,
            # or an earlier import without embedding).
            embedded, computed = chunks_embed(provider=pool.provider,
                                              document_ids=batch.to_embed_documents)
            report.chunks_embedded += embedded
            report.embeddings_computed += computed
            changed_any = changed_any or embedded > 0
        if settings.apply_indexes and not connection.in_atomic_block:
            # Committed: the derived indexes learn this batch now, so it is soon searchable.
            _add_indexed(report, apply_pending_logged())
        bar.update(len(batch.records))
        bar.set_postfix(chunks=report.chunks_written, refresh=False)

    try:
        for records_batch in _batches(records, settings):
            report.read += len(records_batch)
            in_flight.append(_prepare(records_batch, pool, chunker))
            while len(in_flight) > ahead:
                write_oldest()
        while in_flight:
            write_oldest()
    finally:
        bar.close()
        chunker.close()
        if pool is not None:
            pool.close()
    if changed_any:
        with transaction.atomic():
            corpus_revision_bump()
    if report.chunks_written >= ANALYZE_AFTER_CHUNKS:
        planner_statistics_refresh()
    report.seconds = time.perf_counter() - started
    report.revision = CorpusRevision.current()
    # The indexes read committed rows only: inside the caller's transaction they catch up after
    # its commit (outside one, at once, draining anything left behind).
    if settings.apply_indexes:
        transaction.on_commit(lambda: _add_indexed(report, apply_pending_logged()))
    return report


def planner_statistics_refresh() -> None:
    """Sample the archive's tables again, so that the planner sizes its plans by what was loaded.

    Autovacuum would get there, but only after its own delay: until then a bulk-loaded table
    still looks empty or small, and a filtered search may pick a plan that reads it whole.
    """
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE archive_document, archive_chunk")


def _add_indexed(report: IngestReport, counts: dict[str, int]) -> None:
    for name, count in counts.items():
        report.indexed[name] = report.indexed.get(name, 0) + count


class CorrectionError(ValueError):
    """An OCR correction that cannot be kept; the message says why, and nothing was saved."""


# A correction replaces one chunk (a few hundred words): at most this many characters, and at
# most CORRECTION_GROWTH times the text it replaces (plus a sentence's room).
CORRECTION_MAX_CHARS = 20_000
CORRECTION_GROWTH = 2


def chunk_correct(*, chunk: Chunk, user, text: str) -> ChunkCorrection:
    """Keep a historian's correction of a chunk's OCR as a new row and make it the chunk's text.

    The chunk is searched (BM25, vocabulary: marked in the outbox, applied after the commit) and
    embedded (a task after the commit) from the corrected text; the document's text and every
    offset into it stay the OCR's, and the text replaced stays in the row.
    """
    text = text.strip()
    ocr = chunk.document.text[chunk.char_start:chunk.char_end]
    limit = min(CORRECTION_MAX_CHARS, CORRECTION_GROWTH * len(ocr) + 200)
    if not text:
        raise CorrectionError("The correction is empty. Nothing was saved.")
    if problem := text_problem(text, label="the correction", max_chars=limit):
        raise CorrectionError(f"{problem[0].upper()}{problem[1:]} for this passage of "
                              f"{len(ocr):,}. Nothing was saved.")
    if text == chunk.text:
        raise CorrectionError("The correction changes nothing. Nothing was saved.")
    with transaction.atomic():
        locked = Chunk.objects.select_for_update().get(pk=chunk.pk)
        correction = ChunkCorrection.objects.create(chunk=locked, user=user,
                                                    original_text=locked.text, text=text)
        Chunk.objects.filter(pk=locked.pk).update(
            text=text, content_hash=content_sha256(text), embedding=None, embedding_model="")
        record_changes([locked.document_id])
        corpus_revision_bump()
        document_id = locked.document_id
        transaction.on_commit(apply_pending_logged)
        transaction.on_commit(lambda: _send_embedding(document_id))
    chunk.refresh_from_db()
    return correction


def _send_embedding(document_id: int) -> None:
    """Queue the corrected chunk's new vector; without a broker it waits for the next backfill."""
    try:
        embed_document.delay(document_id)
    except Exception:  # noqa: BLE001 - the correction is kept whatever the queue says
        logger.warning(
            "could not queue the embedding of document %s", document_id, exc_info=True)
