"""Read queries for the search page, the warm start and the search entry point."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from archive.models import Chunk, Document, SubCorpus
from common.search import Hit


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
