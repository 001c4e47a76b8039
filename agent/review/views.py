"""Review pages: the sources in force, overrides, notes, quotes, order, the cited answer, the
evidence path, exports, comparisons."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import BadRequest
from django.http import HttpResponse, HttpResponseBadRequest, QueryDict
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.http import urlencode
from django.views.decorators.http import require_POST

from agent.investigations import judge_learning as judge_learning_service
from agent.investigations import selectors
from agent.investigations.judges import LEARNT, judge_in_use
from agent.investigations.services import InvestigationError
from agent.investigations.views import viewer_context
from agent.models import Batch, Investigation, Verdict
from agent.review import evidence_path as evidence_paths
from agent.review import lists as review_lists
from agent.review import services as review_services
from agent.review.cited_answer import shown_answer
from agent.review.comparisons import (
    batch_comparison_csv,
    batches_compared,
    investigation_comparison_csv,
    investigations_compared,
)
from agent.review.exports import FORMATS, UnknownSelection, render_export
from agent.review.lists import ListPage
from agent.review.timeline import source_timeline
from agent.sources import (
    FoldedSource,
    SourceState,
    moved,
    moved_to,
    order_in_force,
    reviewed_sources,
    source_counts,
)
from archive.models import SubCorpus
from archive.params import natural, natural_param, span_param
from archive.selectors import document_by_key

MAX_SELECTED = 1000  # sources one export of a selection may name


def _pager(request, param: str, page: ListPage, anchor: str) -> dict:
    """The list's page with the links to its neighbours (the other parameters kept)."""
    def link(number: int | None) -> str:
        if number is None:
            return ""
        query = request.GET.copy()
        query[param] = str(number)
        query.pop("moved", None)
        query.pop("direction", None)
        return f"?{query.urlencode()}#{anchor}"

    return {"page": page, "previous": link(page.previous), "next": link(page.next)}


def investigation_review(request, pk: int):
    context = viewer_context(request, pk)
    sources = reviewed_sources(context["investigation"])
    ranks = review_lists.relevance(context["investigation"])
    text = request.GET.get("filter", "").strip()
    ranked = [s for s in sources if s.state == SourceState.ACCEPTED]
    held = review_lists.by_relevance(
        [s for s in sources if s.state == SourceState.HELD], ranks)
    rejected = review_lists.by_relevance(
        [s for s in sources if s.state == SourceState.REJECTED], ranks)
    held_page = review_lists.list_page(held, text=text, page=natural_param(request, "held_page"))
    rejected_page = review_lists.list_page(rejected, text=text,
                                           page=natural_param(request, "rejected_page"))
    token = context["token"]

    def source_link(source: FoldedSource) -> str:
        params: dict[str, str | int] = {"doc": source.document_key}
        if source.best_chunk is not None:
            params["chunk"] = source.best_chunk
        if token:
            params["token"] = token
        return f"{reverse('open_source', args=[pk])}?{urlencode(params)}"

    context.update(
        order=order_in_force(context["investigation"], sources),
        counts=source_counts([*sources]),
        ranked=ranked,
        held=held, rejected=rejected, filter=text,
        timeline=source_timeline([*ranked, *held], source_link),
        held_list=_pager(request, "held_page", held_page, "held"),
        rejected_list=_pager(request, "rejected_page", rejected_page, "rejected"),
        rejected_open=bool(text) or "rejected_page" in request.GET,
        decisions=Verdict.Decision.choices,
        formats=list(FORMATS),
        answer=shown_answer(context["investigation"], sources,
                            draft_id=natural_param(request, "draft")),
    )
    if context["can_edit"] and judge_in_use().kind == LEARNT:
        context["judge_learning"] = judge_learning_service.learning_of(request.user)
    return render(request, "agent/review.html", context)


@require_POST
def answer_draft(request, pk: int):
    """Draft the cited answer from the accepted sources in force (a new draft each time)."""
    investigation = selectors.investigation_for_owner(request.user, pk)
    try:
        review_services.answer_draft(investigation=investigation, user=request.user)
    except InvestigationError as exc:
        messages.error(request, str(exc))
    return redirect(reverse("investigation_review", args=[pk]) + "#answer")


@require_POST
def source_override(request, pk: int):
    investigation = selectors.investigation_for_owner(request.user, pk)
    key = request.POST.get("document", "")
    try:
        review_services.verdict_override(
            investigation=investigation, user=request.user, document_key=key,
            decision=request.POST.get("decision", ""), note=request.POST.get("note", ""),
        )
    except InvestigationError as exc:
        return HttpResponseBadRequest(str(exc))
    return redirect(_review_again(request, pk))


@require_POST
def judge_learning(request, pk: int):
    """Turn the judge's learning from the historian on or off, or reset it (from a review)."""
    selectors.investigation_for_owner(request.user, pk)
    action = request.POST.get("action", "")
    if action in ("on", "off"):
        judge_learning_service.learning_switch(user=request.user, enabled=action == "on")
    elif action == "reset":
        judge_learning_service.learning_reset(user=request.user)
    else:
        return HttpResponseBadRequest("Unknown action: use on, off or reset.")
    return redirect(reverse("investigation_review", args=[pk]) + "#judge-learning")


def _review_again(request, pk: int) -> str:
    """The review page as the historian left it: the same filter and pages of the lists."""
    kept = QueryDict(request.POST.get("lists", "")[:1000])
    return _sources_link(pk, urlencode({name: kept[name] for name in
                                        ("filter", "held_page", "rejected_page")
                                        if kept.get(name)}))


def _sources_link(pk: int, query: str) -> str:
    """The review page's sources, with the query string `query` (none when empty)."""
    review = reverse("investigation_review", args=[pk])
    return f"{review}?{query}#sources" if query else f"{review}#sources"


@require_POST
def source_quote(request, pk: int):
    """Keep the passage shown in the viewer as the historian's quote of the source."""
    investigation = selectors.investigation_for_owner(request.user, pk)
    try:
        review_services.evidence_pick(
            investigation=investigation, user=request.user,
            document_key=request.POST.get("document", ""),
            start=natural(request.POST.get("start", "").strip(), label="The start"),
            end=natural(request.POST.get("end", "").strip(), label="The end"))
    except InvestigationError as exc:
        return HttpResponseBadRequest(str(exc))
    messages.info(request, "Your quote is kept; the agent's stays in the evidence path.")
    return redirect(reverse("investigation_review", args=[pk]) + "#sources")


@require_POST
def source_note(request, pk: int):
    investigation = selectors.investigation_for_owner(request.user, pk)
    try:
        review_services.note_add(investigation=investigation, user=request.user,
                          document_key=request.POST.get("document", ""),
                          note=request.POST.get("note", ""))
    except InvestigationError as exc:
        return HttpResponseBadRequest(str(exc))
    return redirect(_review_again(request, pk))


@require_POST
def source_reorder(request, pk: int):
    """Move an accepted source up or down, or save a whole order; each order is a new record."""
    investigation = selectors.investigation_for_owner(request.user, pk)
    key = request.POST.get("document", "")
    direction = request.POST.get("direction", "")
    current = order_in_force(investigation).keys
    try:
        if direction == "to":  # one action to any rank: the rank field
            keys = moved_to(current, key, natural(request.POST.get("rank", "").strip(),
                                                  label="The rank"))
        else:
            keys = request.POST.getlist("order") or moved(current, key, direction)
        if keys != current:
            review_services.sources_reorder(investigation=investigation, user=request.user,
                                     document_keys=keys)
    except ValueError as exc:
        return HttpResponseBadRequest(str(exc))
    return redirect(_sources_link(
        pk, urlencode({"moved": key, "direction": direction}) if key else ""))


def evidence(request, pk: int):
    context = viewer_context(request, pk)
    key = request.GET.get("doc", "")
    context.update(document_key=key,
                   links=evidence_paths.evidence_path(context["investigation"], key),
                   document=document_by_key(key))
    return render(request, "agent/evidence.html", context)


def export(request, pk: int, fmt: str):
    context = viewer_context(request, pk)
    if fmt not in FORMATS:
        return HttpResponseBadRequest(f"Unknown format; choose one of {', '.join(FORMATS)}")
    selected = None
    if "selection" in request.GET or "doc" in request.GET:
        selected = request.GET.getlist("doc")
        problem = ("Select at least one source to export." if not selected else
                   f"Select at most {MAX_SELECTED} sources." if len(selected) > MAX_SELECTED
                   else "")
        if problem:
            return HttpResponseBadRequest(problem, content_type="text/plain; charset=utf-8")
    try:
        body, content_type, filename = render_export(context["investigation"], fmt, selected)
    except UnknownSelection as exc:  # names the key sent: plain text, never markup
        return HttpResponseBadRequest(str(exc), content_type="text/plain; charset=utf-8")
    response = HttpResponse(body, content_type=f"{content_type}; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


def open_source(request, pk: int):
    """Open a source of this investigation in the document viewer, its evidence highlighted."""
    context = viewer_context(request, pk)
    key = request.GET.get("doc", "")
    try:
        document = review_services.source_document(context["investigation"], key)
    except InvestigationError as exc:
        return HttpResponseBadRequest(str(exc))
    chunk = natural_param(request, "chunk")
    offsets = span_param(request, "evidence")
    span = (f"{offsets[0]}-{offsets[1]}" if offsets
            else evidence_paths.evidence_range(context["investigation"], key, chunk))
    params: dict[str, str | int] = {"from": pk}
    if chunk is not None:
        params["chunk"] = chunk
    if span:
        params["evidence"] = span
    if context["token"]:
        params["token"] = context["token"]
    anchor = "#highlight" if span else (f"#chunk-{chunk}" if chunk is not None else "")
    return redirect(f"{reverse('document_detail', args=[document.pk])}?{urlencode(params)}{anchor}")


def _compared_investigations(request) -> tuple[Investigation, Investigation]:
    """The two investigations named by ?a=&b=, each the user's own or shared by its token."""
    first, second = natural_param(request, "a"), natural_param(request, "b")
    if first is None or second is None:
        raise BadRequest("Name the two investigations to compare: ?a=…&b=….")
    return (selectors.investigation_for_viewer(request.user, first, request.GET.get("ta", "")),
            selectors.investigation_for_viewer(request.user, second, request.GET.get("tb", "")))


def investigation_compare(request):
    a, b = _compared_investigations(request)
    tokens = {"ta": request.GET.get("ta", "") if a.owner_id != request.user.pk else "",
              "tb": request.GET.get("tb", "") if b.owner_id != request.user.pk else ""}
    context = {
        "comparison": investigations_compared(a, b),
        "sc_names": dict(SubCorpus.objects.values_list("slug", "name")),
        "query": urlencode({"a": a.pk, "b": b.pk, **{k: v for k, v in tokens.items() if v}}),
        **tokens,
    }
    return render(request, "agent/compare.html", context)


def investigation_compare_csv(request):
    a, b = _compared_investigations(request)
    body = investigation_comparison_csv(investigations_compared(a, b))
    return _csv_download(body, f"trace-compare-{a.pk}-{b.pk}.csv")


def _compared_batches(request) -> tuple[Batch, Batch]:
    first, second = natural_param(request, "a"), natural_param(request, "b")
    if first is None or second is None:
        raise BadRequest("Name the two batches to compare: ?a=…&b=….")
    return (get_object_or_404(Batch, pk=first, owner=request.user),
            get_object_or_404(Batch, pk=second, owner=request.user))


def batch_compare(request):
    a, b = _compared_batches(request)
    return render(request, "agent/batch_compare.html",
                  {"comparison": batches_compared(a, b),
                   "query": urlencode({"a": a.pk, "b": b.pk})})


def batch_compare_csv(request):
    a, b = _compared_batches(request)
    body = batch_comparison_csv(batches_compared(a, b))
    return _csv_download(body, f"trace-compare-batches-{a.pk}-{b.pk}.csv")


def _csv_download(body: str, filename: str) -> HttpResponse:
    response = HttpResponse(body, content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response

