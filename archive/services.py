"""Archive writes: ingest documents, replace their chunks, embed them, bump the revision."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from django.db import DatabaseError, transaction
from django.db.models import F, Q
from tqdm import tqdm

from archive.chunking import chunk_text
from archive.embeddings import EmbeddingProvider, embed_passages_cached, get_provider
from archive.importers import DocumentRecord, RecordError, read_records
from archive.models import Chunk, CorpusRevision, Document, SubCorpus
from archive.outbox import apply_pending_logged, record_changes
from common.search import SubCorpusInfo

ON_ERROR = ("refuse", "skip")
# What a write of an unchecked value raises: the database's refusal, or the driver's when a
# string cannot be encoded for it (a lone surrogate).
WRITE_ERRORS = (DatabaseError, UnicodeEncodeError)


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
        "url": record.url[:500], "metadata": record.metadata, "text": record.text,
        "content_hash": record.content_hash(),
    }


def _chunks_for(document: Document) -> list[Chunk]:
    return [
        Chunk(document=document, ordinal=p.ordinal, text=p.text, char_start=p.char_start,
              char_end=p.char_end, token_count=p.token_count)
        for p in chunk_text(document.text)
    ]


def _embed_chunks(
    chunks: list[Chunk], provider: EmbeddingProvider, on_progress: Callable[[int], object] | None
) -> int:
    vectors, computed = embed_passages_cached(
        provider, [c.text for c in chunks], on_progress=on_progress
    )
    for chunk, vector in zip(chunks, vectors, strict=True):
        chunk.embedding = vector
        chunk.embedding_model = provider.name
    return computed


def documents_write_batch(
    *, records: list[DocumentRecord], provider: EmbeddingProvider | None, report: IngestReport,
    on_embedded: Callable[[int], object] | None = None,
) -> None:
    """Create or update ``records`` with their chunks (and vectors) in one transaction."""
    with transaction.atomic():
        sub_corpora = {r.sub_corpus.slug: sub_corpus_ensure(info=r.sub_corpus) for r in records}
        wanted = Q(pk__in=[])
        for r in records:
            wanted |= Q(sub_corpus=sub_corpora[r.sub_corpus.slug], external_id=r.external_id)
        existing = {
            (d.sub_corpus_id, d.external_id): d
            for d in Document.objects.select_for_update().filter(wanted)
        }
        new_chunks: list[Chunk] = []
        changed = False
        touched: list[int] = []
        for record in records:
            sub_corpus = sub_corpora[record.sub_corpus.slug]
            fields = _document_fields(record)
            document = existing.get((sub_corpus.pk, record.external_id))
            if document is None:
                document = Document.objects.create(
                    sub_corpus=sub_corpus, external_id=record.external_id, **fields
                )
                report.created += 1
                touched.append(document.pk)
            elif document.content_hash == fields["content_hash"]:
                report.unchanged += 1
                continue
            else:
                text_changed = document.text != record.text
                for name, value in fields.items():
                    setattr(document, name, value)
                document.save()
                report.updated += 1
                changed = True
                # Dates and texts feed the indexes: any update marks the document.
                touched.append(document.pk)
                if not text_changed:
                    continue
                # New text: the old chunks, spans and vectors no longer describe it.
                document.chunks.all().delete()
            changed = True
            new_chunks.extend(_chunks_for(document))
        if provider is not None and new_chunks:
            report.embeddings_computed += _embed_chunks(new_chunks, provider, on_embedded)
            report.chunks_embedded += len(new_chunks)
        Chunk.objects.bulk_create(new_chunks, batch_size=500)
        report.chunks_written += len(new_chunks)
        record_changes(touched)
        if changed:
            report.revision = corpus_revision_bump()


def _add_counts(report: IngestReport, batch: IngestReport) -> None:
    for name in ("created", "updated", "unchanged", "chunks_written", "chunks_embedded",
                 "embeddings_computed"):
        setattr(report, name, getattr(report, name) + getattr(batch, name))
    report.revision = max(report.revision, batch.revision)


def documents_write_batch_or_each(
    *, records: list[DocumentRecord], provider: EmbeddingProvider | None, report: IngestReport,
    on_embedded: Callable[[int], object] | None = None,
) -> None:
    """Write ``records`` in one transaction; if the database refuses it, write them one by one.

    A record the database refuses on its own is skipped and listed in ``report.errors``.
    """
    batch = IngestReport()
    try:
        documents_write_batch(records=records, provider=provider, report=batch,
                              on_embedded=on_embedded)
    except WRITE_ERRORS:
        if len(records) == 1:
            raise
    else:
        _add_counts(report, batch)
        return
    for record in records:
        one = IngestReport()
        try:
            documents_write_batch(records=[record], provider=provider, report=one,
                                  on_embedded=on_embedded)
        except WRITE_ERRORS as exc:
            report.read -= 1
            report.errors.append(RecordError(
                record.line, f"refused by the database ({type(exc).__name__}): {exc}"))
        else:
            _add_counts(report, one)


def chunks_embed(
    *, provider: EmbeddingProvider, document_ids: list[int] | None = None, batch_size: int = 64,
    on_embedded: Callable[[int], object] | None = None,
) -> tuple[int, int]:
    """Embed chunks lacking a vector from ``provider``: (chunks embedded, vectors computed).

    Marks nothing in the index outbox: no derived index reads vectors (the HNSW index lives in
    Postgres and follows the rows in the same transaction).
    """
    stale = Chunk.objects.filter(Q(embedding__isnull=True) | ~Q(embedding_model=provider.name))
    if document_ids is not None:
        stale = stale.filter(document_id__in=document_ids)
    ids = list(stale.order_by("pk").values_list("pk", flat=True))
    embedded = computed = 0
    for i in range(0, len(ids), batch_size):
        with transaction.atomic():
            chunks = list(Chunk.objects.select_for_update().filter(pk__in=ids[i : i + batch_size]))
            computed += _embed_chunks(chunks, provider, on_embedded)
            Chunk.objects.bulk_update(chunks, ["embedding", "embedding_model"])
            embedded += len(chunks)
    if embedded:
        corpus_revision_bump()
    return embedded, computed


def ingest_records(
    *, records: list[DocumentRecord], embed: bool = True, provider: EmbeddingProvider | None = None,
    batch_size: int = 25, progress: bool = False, report: IngestReport | None = None,
    skip_refused: bool = False,
) -> IngestReport:
    """Write validated ``records`` batch by batch, then embed whatever still lacks a vector.

    With ``skip_refused`` a batch the database refuses is written record by record and the
    refused records are skipped; otherwise the database error propagates.
    """
    report = report or IngestReport()
    report.read += len(records)
    report.lines = max(report.lines, report.read + len(report.errors))
    write = documents_write_batch_or_each if skip_refused else documents_write_batch
    provider = (provider or get_provider()) if embed else None
    report.provider = provider.name if provider else ""
    started = time.perf_counter()
    doc_bar = tqdm(total=len(records), desc="documents", unit="doc", disable=not progress)
    emb_bar = tqdm(desc="embedding", unit="chunk", disable=not progress or provider is None)
    try:
        for i in range(0, len(records), batch_size):
            batch = records[i : i + batch_size]
            write(records=batch, provider=provider, report=report, on_embedded=emb_bar.update)
            doc_bar.update(len(batch))
        if provider is not None:
            # Unchanged documents may still lack vectors from this provider (a model switch,
            # or an earlier --no-embed run).
            ids = _document_ids(records)
            embedded, computed = chunks_embed(
                provider=provider, document_ids=ids, on_embedded=emb_bar.update
            )
            report.chunks_embedded += embedded
            report.embeddings_computed += computed
    finally:
        doc_bar.close()
        emb_bar.close()
    report.seconds = time.perf_counter() - started
    report.revision = CorpusRevision.current()
    # The indexes read committed rows only: they are brought up to date once the writes commit
    # (at once outside a transaction, after the caller's commit inside one).
    transaction.on_commit(lambda: report.indexed.update(apply_pending_logged()))
    return report


def _document_ids(records: list[DocumentRecord]) -> list[int]:
    ids: list[int] = []
    by_slug: dict[str, list[str]] = {}
    for r in records:
        by_slug.setdefault(r.sub_corpus.slug, []).append(r.external_id)
    for slug, external_ids in by_slug.items():
        for i in range(0, len(external_ids), 1000):
            ids += Document.objects.filter(
                sub_corpus__slug=slug, external_id__in=external_ids[i : i + 1000]
            ).values_list("pk", flat=True)
    return ids


def ingest_file(
    *, path: str | Path, fmt: str = "auto", metadata_csv: str | Path | None = None,
    on_error: str = "refuse", embed: bool = True,
    provider: EmbeddingProvider | str | None = None, batch_size: int = 25, progress: bool = False,
) -> IngestReport:
    """Import ``path``: every record is checked before anything is written.

    With ``on_error="refuse"`` one bad record refuses the whole file, and the writes run in a
    single transaction, so a database error leaves the archive (and its revision) as it was.
    With ``"skip"`` the good records are written and the bad ones listed in the report.
    """
    if on_error not in ON_ERROR:
        raise ValueError(f"on_error must be one of {ON_ERROR}")
    path = Path(path)
    records, errors, resolved = read_records(
        path, fmt=fmt, metadata_csv=Path(metadata_csv) if metadata_csv else None
    )
    lines = len(records) + len(errors)
    if errors and on_error == "refuse":
        raise IngestRefused(path, errors, lines)
    if isinstance(provider, str):
        provider = get_provider(provider)
    report = IngestReport(path=str(path), format=resolved, errors=errors, lines=lines)
    if on_error == "skip":
        return ingest_records(
            records=records, embed=embed, provider=provider, batch_size=batch_size,
            progress=progress, report=report, skip_refused=True,
        )
    try:
        with transaction.atomic():
            return ingest_records(
                records=records, embed=embed, provider=provider, batch_size=batch_size,
                progress=progress, report=report,
            )
    except WRITE_ERRORS as exc:
        raise IngestFailed(
            f"{path}: the database refused a write ({type(exc).__name__}: {exc}); "
            "the import was rolled back and nothing was written."
        ) from exc
