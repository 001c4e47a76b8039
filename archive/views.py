"""Archive browsing views: sub-corpora, documents by date, the document viewer."""

from __future__ import annotations

import datetime as dt

from django.core.paginator import Paginator
from django.shortcuts import get_object_or_404, render

from archive import selectors
from archive.highlight import Span, document_html
from archive.models import Document, SubCorpus


def _date_param(request, name: str) -> dt.date | None:
    value = request.GET.get(name, "").strip()
    if not value:
        return None
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        return None


def _int_param(request, name: str) -> int | None:
    try:
        return int(request.GET[name])
    except (KeyError, ValueError):
        return None


def archive_home(request):
    return render(request, "archive/home.html", {"sub_corpora": selectors.sub_corpus_list()})


def sub_corpus_detail(request, slug: str):
    sub_corpus = get_object_or_404(SubCorpus, slug=slug)
    date_from, date_to = _date_param(request, "from"), _date_param(request, "to")
    documents = selectors.document_list(sub_corpus=sub_corpus, date_from=date_from, date_to=date_to)
    page = Paginator(documents, 50).get_page(request.GET.get("page"))
    return render(request, "archive/sub_corpus.html", {
        "sub_corpus": sub_corpus, "page": page, "date_from": date_from, "date_to": date_to,
    })


def document_detail(request, pk: int):
    document = get_object_or_404(Document.objects.select_related("sub_corpus"), pk=pk)
    chunks = selectors.document_chunks(document)
    chunk_id = _int_param(request, "chunk")
    selected = next((c for c in chunks if c.pk == chunk_id), None)
    start, end = _int_param(request, "start"), _int_param(request, "end")
    if selected is not None:
        span = Span(selected.char_start, selected.char_end)
    elif start is not None and end is not None:
        span = Span(start, end)
    else:
        span = None
    return render(request, "archive/document.html", {
        "document": document, "chunks": chunks, "selected": selected, "span": span,
        "text_html": document_html(document.text, chunks, span, chunk_id),
    })
