"""Read queries for the search page, the warm start and the search entry point."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from archive.models import Chunk, Document, SubCorpus
from common.document_keys import document_key
from common.search import Hit, SearchRequest


def with_passages(hits: Sequence[Hit]) -> list[Hit]:
    """Return the hits with their chunk's text and offset, the document's title and ISO date.

    An untitled document takes its key as title. Hits whose chunk no longer exists (the corpus
    changed since the search) are dropped; the others keep their order, score and ranks.
    """
    rows = Chunk.objects.filter(pk__in=[hit.chunk_id for hit in hits]).values_list(
        "id", "text", "char_start", "document__title", "document__date"
    )
    passages = {chunk_id: (text, start, title, day) for chunk_id, text, start, title, day in rows}
    filled = []
    for hit in hits:
        if hit.chunk_id not in passages:
            continue
        text, start, title, day = passages[hit.chunk_id]
        filled.append(hit.with_(text=text, title=title or hit.document_key,
                                date=day.isoformat() if day else None, chunk_start=start))
    return filled


def confidence_restricted(request: SearchRequest, minimum: float | None, *,
                          keep_unrated: bool = True) -> SearchRequest:
    """Restrict ``request`` to documents whose mean OCR confidence reaches ``minimum`` (0-1).

    Documents without a confidence (imported as text) stay unless ``keep_unrated`` is False.
    Keeping them, the documents below the floor are excluded by key; leaving them out, the
    search is restricted to the ids of the rated documents at or above it. Either way every
    channel applies the restriction inside its own query, so the page still gets its count.
    """
    if minimum is None and keep_unrated:
        return request
    if keep_unrated:
        below = Document.objects.filter(ocr_confidence__lt=minimum).values_list(
            "sub_corpus__slug", "external_id")
        keys = tuple(document_key(slug, external_id) for slug, external_id in below)
        return request.with_(exclude_document_keys=request.exclude_document_keys + keys)
    rated = Document.objects.filter(ocr_confidence__isnull=False)
    if minimum is not None:
        rated = rated.filter(ocr_confidence__gte=minimum)
    if request.document_ids is not None:
        rated = rated.filter(pk__in=list(request.document_ids))
    return request.with_(document_ids=tuple(rated.order_by("pk").values_list("pk", flat=True)))


def documents_by_id(document_ids: Iterable[int]) -> dict[int, Document]:
    """Return documents with their sub-corpus loaded, by id."""
    docs = Document.objects.filter(pk__in=list(document_ids)).select_related("sub_corpus")
    return {doc.pk: doc for doc in docs.defer("text", "layout")}


def sub_corpus_choices() -> list[SubCorpus]:
    """Return every sub-corpus for the filters."""
    return list(SubCorpus.objects.order_by("slug"))


def genre_by_sub_corpus() -> dict[str, str]:
    """Return sub-corpus slug -> genre."""
    return dict(SubCorpus.objects.values_list("slug", "genre"))
