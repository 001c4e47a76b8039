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


def document_ids_for_keys(keys: Iterable[str]) -> dict[str, int]:
    """Return document key -> id for the keys that exist in the archive."""
    wanted: dict[str, set[str]] = {}
    for key in keys:
        slug, _, external_id = key.partition(":")
        wanted.setdefault(slug, set()).add(external_id)
    found: dict[str, int] = {}
    for slug, external_ids in wanted.items():
        rows = Document.objects.filter(
            sub_corpus__slug=slug, external_id__in=external_ids
        ).values_list("external_id", "id")
        found.update({f"{slug}:{external_id}": pk for external_id, pk in rows})
    return found


def genre_by_sub_corpus() -> dict[str, str]:
    """Return sub-corpus slug -> genre."""
    return dict(SubCorpus.objects.values_list("slug", "genre"))
