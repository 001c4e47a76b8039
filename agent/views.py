"""Investigation pages: ask, list, live steps, review, evidence path, exports, sharing, batches."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import BadRequest
from django.db import transaction
from django.http import Http404, HttpResponse, HttpResponseBadRequest, QueryDict
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.http import urlencode
from django.views.decorators.http import require_POST

from agent import judge_learning as judge_learning_service
from agent import review_lists, selectors, services
from agent.batches import BatchFileError, parse_batch_file
from agent.cited_answer import shown_answer
from agent.comparisons import (
    batch_comparison_csv,
    batches_compared,
    investigation_comparison_csv,
    investigations_compared,
)
from agent.exports import FORMATS, UnknownSelection, render_export
from agent.forms import AskForm, BatchForm, InvestigationFileForm, RunAgainForm
from agent.investigation_file import InvestigationFileError, file_name, investigation_file
from agent.judges import LEARNT, judge_in_use
from agent.live_story import investigation_story, touched_sections
from agent.models import Batch, Investigation, Verdict
from agent.review_lists import ListPage
from agent.source_review import moved, moved_to, order_in_force, reviewed_sources
from agent.stats import batch_summary
from agent.timeline import source_timeline
from archive.field_limits import fitted
from archive.models import SubCorpus
from archive.params import natural, natural_param, span_param
from archive.selectors import document_by_key

MAX_SELECTED = 1000  # sources one export of a selection may name

def investigation_list(request):
    query = request.GET.get("q", "").strip()
    status = request.GET.get("status", "")
    investigations = selectors.investigations_for_user(request.user, query=query, status=status)
    context = {"investigations": investigations[:200], "q": query, "status": status,
               "statuses": Investigation.Status.choices}
    template = "agent/list.html#rows" if request.htmx else "agent/list.html"
    return render(request, template, context)


def investigation_new(request):
    form = AskForm(request.POST or None, archive_range=selectors.archive_date_range())
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            with transaction.atomic():
                investigation = services.investigation_create(
                    owner=request.user, question=data["question"],
                    sub_corpus=data["sub_corpus"], date_from=data["date_from"],
                    date_to=data["date_to"],
                )
        except services.InvestigationError as exc:
            form.add_error(None, str(exc))
        else:
            return redirect("investigation_detail", pk=investigation.pk)
    return render(request, "agent/new.html", {"form": form})


def _viewer_context(request, pk: int) -> dict:
    token = request.GET.get("token", "")
    investigation = selectors.investigation_for_viewer(request.user, pk, token)
    owner = investigation.owner_id == request.user.pk
    return {
        "investigation": investigation,
        "sc_names": dict(SubCorpus.objects.values_list("slug", "name")),
        "can_edit": owner,
        "token": "" if owner else token,
        "shared_by": "" if owner else investigation.owner.get_username(),
    }


def _live_context(request, context: dict, *, only: set[int] | None = None) -> dict:
    investigation = context["investigation"]
    story = investigation_story(investigation, context["sc_names"], only=only)
    sources = selectors.folded_sources(investigation)
    context.update(
        story=story, counts=selectors.source_counts(sources), last_seq=story.last_seq,
        budget=investigation.engine_settings.get("step_budget"),
        polling=investigation.is_active,
        share_link=_share_link(request, investigation) if context["can_edit"] else "",
    )
    return context


def investigation_detail(request, pk: int):
    context = _live_context(request, _viewer_context(request, pk))
    investigation = context["investigation"]
    context.update(
        reruns=list(investigation.reruns.order_by("id")) if context["can_edit"] else [],
        comparable=selectors.comparable_investigations(request.user, investigation))
    return render(request, "agent/detail.html", context)


def investigation_log(request, pk: int):
    """List every event of the run in order, each kind through its own template."""
    context = _viewer_context(request, pk)
    context["steps"] = context["investigation"].steps.order_by("seq")
    return render(request, "agent/log.html", context)


def investigation_steps(request, pk: int):
    """Send the sections that received steps after `after`, the progress and a fresh poller."""
    context = _viewer_context(request, pk)
    after = natural_param(request, "after") or 0
    investigation = context["investigation"]
    changed, shown = touched_sections(investigation, after)
    _live_context(request, context, only=changed)
    context.update(oob=True, shown=shown, last_seq=max(context["last_seq"], after),
                   overview_changed=investigation.steps.filter(
                       seq__gt=after, sub_question_index__isnull=True).exists())
    return render(request, "agent/_live_update.html", context)


@require_POST
def investigation_cancel(request, pk: int):
    investigation = selectors.investigation_for_owner(request.user, pk)
    services.investigation_cancel(investigation=investigation)
    messages.info(request, "Cancellation requested: the run stops after its current step.")
    return redirect("investigation_detail", pk=pk)


@require_POST
def investigation_resume(request, pk: int):
    investigation = selectors.investigation_for_owner(request.user, pk)
    try:
        with transaction.atomic():
            services.investigation_resume(investigation=investigation)
    except services.InvestigationError as exc:
        messages.error(request, str(exc))
    else:
        messages.info(request, "Resumed: recorded steps and model replies are reused.")
    return redirect("investigation_detail", pk=pk)


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
    context = _viewer_context(request, pk)
    sources = reviewed_sources(context["investigation"])
    ranks = review_lists.relevance(context["investigation"])
    text = request.GET.get("filter", "").strip()
    ranked = [s for s in sources if s.state == selectors.SourceState.ACCEPTED]
    held = review_lists.by_relevance(
        [s for s in sources if s.state == selectors.SourceState.HELD], ranks)
    rejected = review_lists.by_relevance(
        [s for s in sources if s.state == selectors.SourceState.REJECTED], ranks)
    held_page = review_lists.list_page(held, text=text, page=natural_param(request, "held_page"))
    rejected_page = review_lists.list_page(rejected, text=text,
                                           page=natural_param(request, "rejected_page"))
    token = context["token"]

    def source_link(source: selectors.Source) -> str:
        params: dict[str, str | int] = {"doc": source.document_key}
        if source.best_chunk is not None:
            params["chunk"] = source.best_chunk
        if token:
            params["token"] = token
        return f"{reverse('open_source', args=[pk])}?{urlencode(params)}"

    context.update(
        order=order_in_force(context["investigation"], sources),
        counts=selectors.source_counts([*sources]),
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
        services.answer_draft(investigation=investigation, user=request.user)
    except services.InvestigationError as exc:
        messages.error(request, str(exc))
    return redirect(reverse("investigation_review", args=[pk]) + "#answer")


@require_POST
def source_override(request, pk: int):
    investigation = selectors.investigation_for_owner(request.user, pk)
    key = request.POST.get("document", "")
    try:
        services.verdict_override(
            investigation=investigation, user=request.user, document_key=key,
            decision=request.POST.get("decision", ""), note=request.POST.get("note", ""),
        )
    except services.InvestigationError as exc:
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
    query = urlencode({name: kept[name] for name in ("filter", "held_page", "rejected_page")
                       if kept.get(name)})
    review = reverse("investigation_review", args=[pk])
    return f"{review}?{query}#sources" if query else f"{review}#sources"


@require_POST
def source_quote(request, pk: int):
    """Keep the passage shown in the viewer as the historian's quote of the source."""
    investigation = selectors.investigation_for_owner(request.user, pk)
    try:
        services.evidence_pick(
            investigation=investigation, user=request.user,
            document_key=request.POST.get("document", ""),
            start=natural(request.POST.get("start", "").strip(), label="The start"),
            end=natural(request.POST.get("end", "").strip(), label="The end"))
    except services.InvestigationError as exc:
        return HttpResponseBadRequest(str(exc))
    messages.info(request, "Your quote is kept; the agent's stays in the evidence path.")
    return redirect(reverse("investigation_review", args=[pk]) + "#sources")


@require_POST
def source_note(request, pk: int):
    investigation = selectors.investigation_for_owner(request.user, pk)
    try:
        services.note_add(investigation=investigation, user=request.user,
                          document_key=request.POST.get("document", ""),
                          note=request.POST.get("note", ""))
    except services.InvestigationError as exc:
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
            services.sources_reorder(investigation=investigation, user=request.user,
                                     document_keys=keys)
    except ValueError as exc:
        return HttpResponseBadRequest(str(exc))
    query = urlencode({"moved": key, "direction": direction}) if key else ""
    review = reverse("investigation_review", args=[pk])
    return redirect(f"{review}?{query}#sources" if query else f"{review}#sources")


def evidence(request, pk: int):
    context = _viewer_context(request, pk)
    key = request.GET.get("doc", "")
    context.update(document_key=key,
                   links=selectors.evidence_path(context["investigation"], key),
                   document=document_by_key(key))
    return render(request, "agent/evidence.html", context)


def export(request, pk: int, fmt: str):
    context = _viewer_context(request, pk)
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


def investigation_download(request, pk: int):
    """The whole investigation as one file, to import on another instance."""
    investigation = _viewer_context(request, pk)["investigation"]
    if investigation.is_active:
        return HttpResponse(f"The run is still {investigation.status}: download it once it has "
                            "ended.", status=409, content_type="text/plain; charset=utf-8")
    response = HttpResponse(investigation_file(investigation),
                            content_type="application/json; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{file_name(investigation)}"'
    return response


def investigation_import(request):
    """Upload an investigation file; it becomes a new investigation of the historian's."""
    form = InvestigationFileForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        try:
            result = services.investigation_import(owner=request.user,
                                                   data=form.cleaned_data["file"].read())
        except InvestigationFileError as exc:
            form.add_error("file", f"Not imported, nothing was written: {exc}")
        else:
            imported = result.investigation
            messages.success(request, f"Imported as investigation #{imported.pk}.")
            if result.missing_documents:
                listed = "; ".join(f"{key} ({reason})"
                                   for key, reason in result.missing_documents.items())
                messages.warning(request, f"{len(result.missing_documents)} document(s) the file "
                                          f"names are missing here: {listed}.")
            if result.other_authors:
                messages.info(request, "Decisions and notes by " + ", ".join(result.other_authors)
                              + " are kept without an author: no account here is theirs.")
            return redirect("investigation_review", pk=imported.pk)
    status = 400 if request.method == "POST" else 200
    return render(request, "agent/import.html", {"form": form}, status=status)


def _share_link(request, investigation: Investigation) -> str:
    if not investigation.share_token:
        return ""
    return request.build_absolute_uri(
        reverse("investigation_detail", args=[investigation.pk])
        + f"?token={investigation.share_token}")


@require_POST
def investigation_share(request, pk: int):
    """Create the read-only link (the same one every time until revoked), or revoke it."""
    investigation = selectors.investigation_for_owner(request.user, pk)
    enable = request.POST.get("enable", "1") == "1"
    services.investigation_share(investigation=investigation, enable=enable)
    if not enable:
        messages.info(request, "Sharing stopped: the old link no longer opens this investigation.")
        return redirect("investigation_detail", pk=pk)
    return redirect(reverse("investigation_detail", args=[pk]) + "?share=open#share")


def batch_new(request):
    form = BatchForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        upload = form.cleaned_data["file"]
        try:
            rows = parse_batch_file(upload.name, upload.read())
        except BatchFileError as exc:
            form.add_error("file", str(exc))
        else:
            with transaction.atomic():
                name = form.cleaned_data["name"] or fitted(Batch, "name", upload.name)
                batch = Batch.objects.create(owner=request.user, name=name)
                for row in rows:
                    services.investigation_create(
                        owner=request.user, question=row.question, batch=batch, qid=row.qid,
                        question_type=row.question_type, gold_keys=row.gold_keys,
                    )
            return redirect("batch_detail", pk=batch.pk)
    return render(request, "agent/batch_new.html", {"form": form})


def batch_list(request):
    batches = selectors.batches_for_user(request.user)
    return render(request, "agent/batch_list.html", {"batches": batches})


def batch_detail(request, pk: int):
    batch = get_object_or_404(Batch, pk=pk, owner=request.user)
    summary = batch_summary(batch)
    template = "agent/batch.html#progress" if request.htmx else "agent/batch.html"
    # Once done, the partial comes back without its poller, so polling stops after the last update.
    others = ([] if request.htmx
              else list(selectors.batches_for_user(request.user).exclude(pk=batch.pk)[:100]))
    return render(request, template, {"batch": batch, "summary": summary, "others": others})


def open_source(request, pk: int):
    """Open a source of this investigation in the document viewer, its evidence highlighted."""
    context = _viewer_context(request, pk)
    key = request.GET.get("doc", "")
    if not context["investigation"].verdicts.filter(document_key=key).exists():
        return HttpResponseBadRequest("This document has no verdict in this investigation.")
    document = document_by_key(key)
    if document is None:
        return HttpResponseBadRequest("This document is no longer in the archive.")
    chunk = natural_param(request, "chunk")
    offsets = span_param(request, "evidence")
    span = (f"{offsets[0]}-{offsets[1]}" if offsets
            else selectors.evidence_range(context["investigation"], key, chunk))
    params: dict[str, str | int] = {"from": pk}
    if chunk is not None:
        params["chunk"] = chunk
    if span:
        params["evidence"] = span
    if context["token"]:
        params["token"] = context["token"]
    anchor = "#highlight" if span else (f"#chunk-{chunk}" if chunk is not None else "")
    return redirect(f"{reverse('document_detail', args=[document.pk])}?{urlencode(params)}{anchor}")


def investigation_again(request, pk: int):
    """Run the question again with another policy, model, settings or restriction."""
    first = selectors.investigation_for_owner(request.user, pk)
    form = RunAgainForm(request.POST or None, archive_range=selectors.archive_date_range(),
                        initial=RunAgainForm.initial_from(first))
    if request.method == "POST" and form.is_valid():
        try:
            with transaction.atomic():
                rerun = services.investigation_rerun(investigation=first, owner=request.user,
                                                     choices=form.choices(first))
        except services.InvestigationError as exc:
            form.add_error(None, str(exc))
        else:
            return redirect("investigation_detail", pk=rerun.pk)
    return render(request, "agent/again.html", {"form": form, "first": first})


def batch_again(request, pk: int):
    """Run every question of a batch again with the same changed choices, as a new batch."""
    batch = get_object_or_404(Batch, pk=pk, owner=request.user)
    first = batch.investigations.order_by("id").first()
    if first is None:
        raise Http404("This batch holds no question.")
    form = RunAgainForm(request.POST or None, archive_range=selectors.archive_date_range(),
                        initial=RunAgainForm.initial_from(first))
    if request.method == "POST" and form.is_valid():
        try:
            with transaction.atomic():
                rerun = services.batch_rerun(batch=batch, owner=request.user,
                                             choices=form.choices(first))
        except services.InvestigationError as exc:
            form.add_error(None, str(exc))
        else:
            return redirect("batch_detail", pk=rerun.pk)
    return render(request, "agent/again.html", {"form": form, "first": first, "batch": batch})


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
