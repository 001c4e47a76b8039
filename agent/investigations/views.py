"""Investigation pages: ask, list, the live page and its log, cancel, resume, files, sharing,
batches, run again."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.contrib import messages
from django.db import transaction
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from agent.investigations import selectors, services
from agent.investigations.batches import BatchFileError, parse_batch_file
from agent.investigations.forms import AskForm, BatchForm, InvestigationFileForm, RunAgainForm
from agent.investigations.investigation_file import (
    InvestigationFileError,
    file_name,
    investigation_file,
)
from agent.investigations.live_story import investigation_story, touched_sections
from agent.investigations.stats import batch_summary
from agent.models import Batch, Investigation
from agent.sources import folded_sources, source_counts
from archive.field_limits import fitted
from archive.models import SubCorpus
from archive.params import natural_param


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


def viewer_context(request, pk: int) -> dict:
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
    sources = folded_sources(investigation)
    context.update(
        story=story, counts=source_counts(sources), last_seq=story.last_seq,
        budget=investigation.engine_settings.get("step_budget"),
        polling=investigation.is_active,
        share_link=_share_link(request, investigation) if context["can_edit"] else "",
    )
    return context


def investigation_detail(request, pk: int):
    context = _live_context(request, viewer_context(request, pk))
    investigation = context["investigation"]
    context.update(
        reruns=list(investigation.reruns.order_by("id")) if context["can_edit"] else [],
        comparable=selectors.comparable_investigations(request.user, investigation))
    return render(request, "agent/detail.html", context)


def investigation_log(request, pk: int):
    """List every event of the run in order, each kind through its own template."""
    context = viewer_context(request, pk)
    context["steps"] = context["investigation"].steps.order_by("seq")
    return render(request, "agent/log.html", context)


def investigation_steps(request, pk: int):
    """Send the sections that received steps after `after`, the progress and a fresh poller."""
    context = viewer_context(request, pk)
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


def investigation_download(request, pk: int):
    """The whole investigation as one file, to import on another instance."""
    investigation = viewer_context(request, pk)["investigation"]
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


def investigation_again(request, pk: int):
    """Run the question again with another policy, model, settings or restriction."""
    first = selectors.investigation_for_owner(request.user, pk)
    return _again(request, first, "investigation_detail",
                  lambda choices: services.investigation_rerun(
                      investigation=first, owner=request.user, choices=choices))


def batch_again(request, pk: int):
    """Run every question of a batch again with the same changed choices, as a new batch."""
    batch = get_object_or_404(Batch, pk=pk, owner=request.user)
    first = batch.investigations.order_by("id").first()
    if first is None:
        raise Http404("This batch holds no question.")
    return _again(request, first, "batch_detail",
                  lambda choices: services.batch_rerun(batch=batch, owner=request.user,
                                                       choices=choices),
                  batch=batch)


def _again(request, first: Investigation, detail: str,
           rerun: Callable[[services.RunChoices], Investigation | Batch], **context: Any):
    """The run-again form, its choices starting from `first`'s; a valid POST starts `rerun`
    with the choices made and opens it (page `detail`), a refused one shows why."""
    form = RunAgainForm(request.POST or None, archive_range=selectors.archive_date_range(),
                        initial=RunAgainForm.initial_from(first))
    if request.method == "POST" and form.is_valid():
        try:
            with transaction.atomic():
                started = rerun(form.choices(first))
        except services.InvestigationError as exc:
            form.add_error(None, str(exc))
        else:
            return redirect(detail, pk=started.pk)
    return render(request, "agent/again.html", {"form": form, "first": first, **context})

