"""Read queries for the search page and the search entry point."""

from __future__ import annotations

from collections.abc import Iterable

from archive.models import Chunk, Document, SubCorpus


def chunk_texts(chunk_ids: Iterable[int]) -> dict[int, tuple[str, str, object]]:
    """Return chunk id -> (chunk text, document title, document date)."""
    rows = Chunk.objects.filter(pk__in=list(chunk_ids)).values_list(
        "id", "text", "document__title", "document__date"
    )
    return {row[0]: (row[1], row[2], row[3]) for row in rows}


def documents_by_id(document_ids: Iterable[int]) -> dict[int, Document]:
    """Return documents with their sub-corpus loaded, by id."""
    docs = Document.objects.filter(pk__in=list(document_ids)).select_related("sub_corpus")
    return {doc.pk: doc for doc in docs.defer("text")}


def sub_corpus_choices() -> list[SubCorpus]:
    """Return every sub-corpus for the filters."""
    return list(SubCorpus.objects.order_by("slug"))


def genre_by_sub_corpus() -> dict[str, str]:
    """Return sub-corpus slug -> genre."""
    return dict(SubCorpus.objects.values_list("slug", "genre"))
