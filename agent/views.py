"""Investigation pages: ask, list, live steps, review, evidence path, exports, sharing, batches."""

from __future__ import annotations

from django.contrib import messages
from django.db import transaction
from django.http import HttpResponse, HttpResponseBadRequest
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from agent import selectors, services
from agent.batches import BatchFileError, parse_batch_file
from agent.exports import FORMATS, render_export
from agent.forms import AskForm, BatchForm
from agent.models import Batch, Investigation, Verdict
from agent.stats import batch_summary
from archive.models import SubCorpus
from archive.selectors import document_by_key

STEP_PAGE = 200  # steps sent per poll: a long backlog arrives over a few polls


def investigation_list(request):
    query = request.GET.get("q", "").strip()
    status = request.GET.get("status", "")
    investigations = selectors.investigations_for_user(request.user, query=query, status=status)
    context = {"investigations": investigations[:200], "q": query, "status": status,
               "statuses": Investigation.Status.choices}
    template = "agent/list.html#rows" if request.htmx else "agent/list.html"
    return render(request, template, context)


def investigation_new(request):
    form = AskForm(request.POST or None)
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
    return {
        "investigation": investigation,
        "sc_names": dict(SubCorpus.objects.values_list("slug", "name")),
        "can_edit": investigation.owner_id == request.user.pk,
        "token": token if investigation.owner_id != request.user.pk else "",
    }


def investigation_detail(request, pk: int):
    context = _viewer_context(request, pk)
    investigation = context["investigation"]
    steps = list(selectors.steps_after(investigation, 0)[:STEP_PAGE])
    context.update(steps=steps, last_seq=steps[-1].seq if steps else 0,
                   polling=investigation.is_active or len(steps) == STEP_PAGE)
    return render(request, "agent/detail.html", context)


def investigation_steps(request, pk: int):
    """Return the steps after `after` plus a fresh poller; no poller once the run has ended."""
    context = _viewer_context(request, pk)
    investigation = context["investigation"]
    try:
        after = int(request.GET.get("after", "0"))
    except ValueError:
        return HttpResponseBadRequest("after must be an integer")
    steps = list(selectors.steps_after(investigation, after)[:STEP_PAGE])
    context.update(steps=steps, last_seq=steps[-1].seq if steps else after,
                   polling=investigation.is_active or len(steps) == STEP_PAGE, oob=True)
    return render(request, "agent/detail.html#poll", context)


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


def investigation_review(request, pk: int):
    context = _viewer_context(request, pk)
    sources = selectors.review_sources(context["investigation"])
    context.update(
        ranked=[s for s in sources if s.state == "accepted"],
        held=[s for s in sources if s.state == "held"],
        rejected=[s for s in sources if s.state == "rejected"],
        decisions=Verdict.Decision.choices,
        formats=list(FORMATS),
    )
    return render(request, "agent/review.html", context)


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
    return redirect(reverse("investigation_review", args=[pk]) + "#sources")


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
    body, content_type, filename = render_export(context["investigation"], fmt)
    response = HttpResponse(body, content_type=f"{content_type}; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


@require_POST
def investigation_share(request, pk: int):
    investigation = selectors.investigation_for_owner(request.user, pk)
    enable = request.POST.get("enable", "1") == "1"
    services.investigation_share(investigation=investigation, enable=enable)
    if enable:
        link = request.build_absolute_uri(
            reverse("investigation_detail", args=[pk]) + f"?token={investigation.share_token}"
        )
        messages.info(request, f"Read-only link for logged-in colleagues: {link}")
    else:
        messages.info(request, "Sharing revoked.")
    return redirect("investigation_detail", pk=pk)


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
                batch = Batch.objects.create(owner=request.user,
                                             name=form.cleaned_data["name"] or upload.name)
                for row in rows:
                    services.investigation_create(
                        owner=request.user, question=row.question, batch=batch, qid=row.qid,
                        question_type=row.question_type, gold_ids=row.gold_ids,
                    )
            return redirect("batch_detail", pk=batch.pk)
    return render(request, "agent/batch_new.html", {"form": form})


def batch_detail(request, pk: int):
    batch = get_object_or_404(Batch, pk=pk, owner=request.user)
    summary = batch_summary(batch)
    template = "agent/batch.html#progress" if request.htmx else "agent/batch.html"
    # Once done, the partial comes back without its poller, so polling stops after the last update.
    return render(request, template, {"batch": batch, "summary": summary})


def open_source(request, pk: int):
    """Open a source of this investigation in the document viewer, its evidence highlighted."""
    context = _viewer_context(request, pk)
    key = request.GET.get("doc", "")
    if not context["investigation"].verdicts.filter(document_key=key).exists():
        return HttpResponseBadRequest("This document has no verdict in this investigation.")
    document = document_by_key(key)
    if document is None:
        return HttpResponseBadRequest("This document is no longer in the archive.")
    url = reverse("document_detail", args=[document.pk])
    chunk = request.GET.get("chunk", "")
    return redirect(f"{url}?chunk={chunk}#chunk-{chunk}" if chunk.isdigit() else url)
