"""Archive reads for the browse pages and for other apps."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable

from django.db.models import Count, Max, Min, Q, QuerySet

from archive.models import Chunk, Document, SubCorpus
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
