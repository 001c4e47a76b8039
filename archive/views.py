"""Archive browsing views: sub-corpora, documents by date, the document viewer."""

from __future__ import annotations

import datetime as dt

from django.conf import settings
from django.contrib import messages
from django.core.paginator import Paginator
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.csp import CSP
from django.views.decorators.http import require_POST

from archive import selectors, services
from archive.citation_meta import citation_meta
from archive.highlight import Span, document_html
from archive.iiif import iiif_url_problem, image_origin, is_manifest, span_regions
from archive.layout import DocumentLayout
from archive.models import Chunk, Document, SubCorpus
from archive.params import natural_param, span_param
from archive.quote_moves import quote_moves


def _date_param(request, name: str) -> dt.date | None:
    value = request.GET.get(name, "").strip()
    if not value:
        return None
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
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


def _moves_base(request) -> str:
    """The viewer's query without its evidence range, for the links that move the quote."""
    query = request.GET.copy()
    for name in ("evidence", "start", "end"):
        query.pop(name, None)
    return query.urlencode()


def document_detail(request, pk: int):
    """Show a document, its evidence sentences highlighted and the chunk that holds them marked.

    `evidence=start-end` (or `start` and `end`) are character offsets into the text; `chunk`
    marks a chunk faintly; `from` (and `token`) link back to the investigation that cited it.
    A malformed number in any of them is a 400 (archive.params).
    """
    document = get_object_or_404(Document.objects.select_related("sub_corpus"), pk=pk)
    chunks = selectors.document_chunks(document)
    chunk_id = natural_param(request, "chunk")
    selected = next((c for c in chunks if c.pk == chunk_id), None)
    offsets = span_param(request, "evidence")
    span = Span(*offsets) if offsets else None
    start, end = natural_param(request, "start"), natural_param(request, "end")
    if span is None and start is not None and end is not None and start < end:
        span = Span(start, end)
    if span is not None and selected is None:
        selected = next((c for c in chunks if c.char_start <= span.start < c.char_end), None)
    investigation = natural_param(request, "from")
    token = request.GET.get("token", "")
    layout = document.document_layout()
    regions = _page_regions(layout, document, span, selected)
    iiif = document.iiif_url
    if iiif and iiif_url_problem(iiif):  # checked at import; a row written otherwise is not linked
        iiif = ""
    moves = None
    if investigation is not None and span is not None and not token:
        moves = quote_moves(document.text, span)
    corrections = selectors.corrections_in_force(c.pk for c in chunks)
    viewer_url = request.build_absolute_uri(reverse("document_detail", args=[document.pk]) + (
        f"?evidence={span.start}-{span.end}" if span is not None else ""))
    response = render(request, "archive/document.html", {
        "citation_meta": citation_meta(document, start=span.start if span else None,
                                       end=span.end if span else None, viewer_url=viewer_url),
        "document": document, "chunks": chunks, "selected": selected, "span": span,
        "moves": moves, "moves_base": _moves_base(request),
        "text_html": document_html(document.text, chunks, span,
                                   selected.pk if selected else None,
                                   {pk: c.text for pk, c in corrections.items()}, layout=layout),
        "corrections": correction_rows(document, chunks, corrections),
        "shaded": layout is not None and any(block.word_confidences
                                             for _, block in layout.blocks()),
        "from_investigation": investigation, "token": token, "regions": regions,
        "iiif_link": iiif, "iiif_manifest": bool(iiif) and is_manifest(iiif),
    })
    if regions:
        # The page may load images from the IIIF hosts it shows, and from nowhere else.
        origins = sorted({image_origin(region.url) for region in regions})
        response._csp_config = {  # type: ignore[attr-defined]
            **settings.SECURE_CSP, "img-src": [CSP.SELF, "data:", *origins]}
    return response


def correction_rows(document: Document, chunks, corrections: dict) -> list[dict]:
    """The corrected chunks of a document: who corrected them, when, and the OCR's text."""
    by_id = {chunk.pk: chunk for chunk in chunks}
    return [{"chunk": by_id[pk], "correction": correction,
             "ocr": document.text[by_id[pk].char_start:by_id[pk].char_end]}
            for pk, correction in sorted(corrections.items(),
                                         key=lambda item: by_id[item[0]].ordinal)]


@require_POST
def chunk_correct(request, pk: int):
    """Keep the historian's correction of a chunk's OCR; a refusal shows the reason (400)."""
    chunk = get_object_or_404(Chunk.objects.select_related("document"), pk=pk)
    text = request.POST.get("text", "")
    try:
        services.chunk_correct(chunk=chunk, user=request.user, text=text)
    except services.CorrectionError as exc:
        return render(request, "archive/correction_refused.html", {
            "chunk": chunk, "error": str(exc),
            "text": text[:services.CORRECTION_MAX_CHARS]}, status=400)
    messages.success(request, f"Your correction of chunk {chunk.ordinal} is kept; the OCR's "
                              "text stays available below.")
    return redirect(f"{reverse('document_detail', args=[chunk.document_id])}"
                    f"?chunk={chunk.pk}#chunk-{chunk.pk}")


def _page_regions(layout: DocumentLayout | None, document: Document, span: Span | None,
                  selected) -> list:
    """The page-image regions of the evidence (else the marked chunk) of a scanned document."""
    if layout is None:
        return []
    if span is not None:
        start, end = span.start, span.end
    elif selected is not None:
        start, end = selected.char_start, selected.char_end
    else:
        return []
    return span_regions(layout, start, end, document.iiif_url)
