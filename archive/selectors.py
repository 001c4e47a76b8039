"""Archive reads for the browse pages and for other apps."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable

from django.db.models import Count, Max, Min, Q, QuerySet

from archive.corrections import OffsetMap, corrected_slice
from archive.models import Chunk, ChunkCorrection, Document, SubCorpus
from common.document_keys import split_document_key


def sub_corpus_list() -> QuerySet[SubCorpus]:
    """Return sub-corpora with their document count and date range."""
    return SubCorpus.objects.annotate(
        document_count=Count("documents"),
        first_date=Min("documents__date"),
        last_date=Max("documents__date"),
    ).order_by("genre", "name")


def document_list(
    *, sub_corpus: SubCorpus, date_from: dt.date | None = None, date_to: dt.date | None = None
) -> QuerySet[Document]:
    """Return the documents of ``sub_corpus`` by date, optionally inside a date range."""
    documents = Document.objects.filter(sub_corpus=sub_corpus)
    if date_from:
        documents = documents.filter(date__gte=date_from)
    if date_to:
        documents = documents.filter(date__lte=date_to)
    return (
        documents.annotate(chunk_count=Count("chunks"))
        .defer("text", "layout")
        .order_by("date", "external_id")
    )


def documents_by_keys(keys: Iterable[str]) -> dict[str, Document]:
    """Map "<sub-corpus slug>:<external id>" keys to documents (text deferred); others left out."""
    wanted = Q(pk__in=[])
    for key in keys:
        try:
            slug, external_id = split_document_key(key)
        except ValueError:
            continue
        wanted |= Q(sub_corpus__slug=slug, external_id=external_id)
    found = Document.objects.filter(wanted).select_related("sub_corpus").defer("text", "layout")
    return {doc.key: doc for doc in found}


def document_by_key(key: str) -> Document | None:
    """Return the document for "<sub-corpus slug>:<external id>", or None."""
    return documents_by_keys([key]).get(key)


def document_chunks(document: Document) -> list[Chunk]:
    """Return the chunks of ``document`` in order, without their vectors."""
    return list(document.chunks.defer("embedding").order_by("ordinal"))


def corrections_in_force(chunk_ids: Iterable[int]) -> dict[int, ChunkCorrection]:
    """The newest correction of each of these chunks that has one, by chunk id."""
    newest: dict[int, ChunkCorrection] = {}
    for correction in (ChunkCorrection.objects.filter(chunk_id__in=list(chunk_ids))
                       .select_related("user").order_by("chunk_id", "-created_at", "-id")):
        newest.setdefault(correction.chunk_id, correction)
    return newest


def corrected_text(document: Document, start: int, end: int) -> str:
    """The document's characters start..end (OCR offsets) with its chunks' corrections in force."""
    chunks = list(document.chunks.filter(char_end__gt=start, char_start__lt=end)
                  .only("pk", "char_start", "char_end"))
    corrected = {pk: c.text for pk, c in corrections_in_force(c.pk for c in chunks).items()}
    return corrected_slice(document.text, chunks, corrected, start, end)


def ocr_offsets(chunk_id: int, start: int, end: int, text: str) -> tuple[int, int]:
    """Offsets into the document found in a corrected chunk's text, carried onto the OCR's.

    The engine reads a chunk's text in force and locates evidence as `chunk start + offset in
    that text`; for a corrected chunk whose `text` is what those offsets cut, this returns the
    OCR text's offsets, so a verdict's evidence means the same characters as every other one.
    Anything else (no correction, or another text) is returned unchanged.
    """
    correction = corrections_in_force([chunk_id]).get(chunk_id)
    if correction is None:
        return start, end
    chunk = Chunk.objects.select_related("document").only(
        "char_start", "char_end", "document__text").get(pk=chunk_id)
    lo, hi = start - chunk.char_start, end - chunk.char_start
    if not (0 <= lo <= hi <= len(correction.text)) or correction.text[lo:hi] != text:
        return start, end
    offsets = OffsetMap(chunk.document.text[chunk.char_start:chunk.char_end], correction.text)
    return chunk.char_start + offsets.to_original(lo), chunk.char_start + offsets.to_original(hi)
