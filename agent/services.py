"""Writes that span investigation models: create, run, cancel, resume, override, share."""

from __future__ import annotations

import dataclasses
import logging
from datetime import date, timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from agent.engine.policy import Policy
from agent.engine.ports import Retriever
from agent.models import Batch, DocumentNote, Investigation, Verdict
from agent.policies import build_policy, configured_policy, engine_config
from agent.sink import DjangoEventSink

logger = logging.getLogger(__name__)


class InvestigationError(ValueError):
    """A request about an investigation that cannot be honoured."""


def investigation_create(
    *,
    owner,
    question: str,
    sub_corpus: str = "",
    date_from: date | None = None,
    date_to: date | None = None,
    batch: Batch | None = None,
    qid: str = "",
    question_type: str = "",
    gold_ids: list[str] | None = None,
    enqueue: bool = True,
) -> Investigation:
    """Create an investigation and queue it for a worker once the transaction commits."""
    question = question.strip()
    if not question:
        raise InvestigationError("The question is empty.")
    if date_from and date_to and date_from > date_to:
        raise InvestigationError("The start date is after the end date.")
    policy = configured_policy()
    investigation = Investigation.objects.create(
        owner=owner, question=question, sub_corpus=sub_corpus or "", date_from=date_from,
        date_to=date_to, batch=batch, qid=qid, question_type=question_type,
        gold_ids=list(gold_ids or []), policy=policy.kind, policy_label=policy.label,
        models_used=policy.models,
        engine_settings=dataclasses.asdict(engine_config()),
    )
    if enqueue:
        investigation_enqueue(investigation=investigation)
    return investigation


def investigation_enqueue(*, investigation: Investigation) -> None:
    """Send the run to a worker after commit (a rolled-back row is never run)."""
    from agent.tasks import run_investigation

    investigation_id = investigation.pk
    transaction.on_commit(
        lambda: run_investigation.apply_async(
            args=[investigation_id], queue=settings.TRACE_CELERY_QUEUE
        )
    )


def investigation_execute(*, investigation_id: int, retriever: Retriever | None = None,
                          policy: Policy | None = None) -> Investigation:
    """Run (or resume) the engine for one investigation, persisting every event as it happens."""
    from agent.engine.investigation import run_investigation as engine_run

    with transaction.atomic():
        investigation = Investigation.objects.select_for_update().get(pk=investigation_id)
        if investigation.status in (Investigation.Status.FINISHED, Investigation.Status.CANCELLED):
            return investigation
        if investigation.status == Investigation.Status.RUNNING and _heartbeat_fresh(investigation):
            logger.warning("investigation %s is already running elsewhere", investigation_id)
            return investigation
        investigation.status = Investigation.Status.RUNNING
        investigation.attempts += 1
        investigation.error = ""
        investigation.started_at = investigation.started_at or timezone.now()
        investigation.heartbeat_at = timezone.now()
        investigation.save()

    sink = DjangoEventSink(investigation)
    if retriever is None:
        from agent.retriever import ArchiveRetriever

        retriever = ArchiveRetriever()
    policy = policy or build_policy(investigation)
    try:
        result = engine_run(
            investigation.question,
            policy=policy,
            retriever=retriever,
            sink=sink,
            config=engine_config(investigation.engine_settings),
            sub_corpus=investigation.sub_corpus or None,
            date_from=investigation.date_from.isoformat() if investigation.date_from else None,
            date_to=investigation.date_to.isoformat() if investigation.date_to else None,
        )
    except Exception as exc:
        logger.exception("investigation %s failed", investigation_id)
        Investigation.objects.filter(pk=investigation_id).update(
            status=Investigation.Status.FAILED, error=f"{type(exc).__name__}: {exc}",
            finished_at=timezone.now(),
        )
        raise
    counters = result.counters
    cost = configured_policy().cost(counters.input_tokens, counters.output_tokens)
    status = (Investigation.Status.CANCELLED if result.status == "cancelled"
              else Investigation.Status.FINISHED)
    Investigation.objects.filter(pk=investigation_id).update(
        status=status, finished_at=timezone.now(), ranked_ids=list(result.ranked_documents),
        llm_calls=counters.llm_calls, input_tokens=counters.input_tokens,
        output_tokens=counters.output_tokens, cached_tokens=counters.cached_tokens,
        model_seconds=counters.model_seconds, engine_seconds=counters.engine_seconds,
        cost=cost, cancel_requested=False,
    )
    investigation.refresh_from_db()
    return investigation


def _heartbeat_fresh(investigation: Investigation, seconds: int = 120) -> bool:
    beat = investigation.heartbeat_at
    return beat is not None and timezone.now() - beat < timedelta(seconds=seconds)


def investigation_cancel(*, investigation: Investigation) -> None:
    """Ask the running engine to stop at its next step; a queued run is cancelled at once."""
    if investigation.status == Investigation.Status.QUEUED:
        Investigation.objects.filter(pk=investigation.pk).update(
            status=Investigation.Status.CANCELLED, cancel_requested=True,
            finished_at=timezone.now(),
        )
    elif investigation.status == Investigation.Status.RUNNING:
        Investigation.objects.filter(pk=investigation.pk).update(cancel_requested=True)
    investigation.refresh_from_db()


def investigation_resume(*, investigation: Investigation) -> None:
    """Queue an interrupted, failed or cancelled run again; recorded model replies are reused."""
    if not investigation.can_resume:
        raise InvestigationError(f"An investigation that is {investigation.status} cannot resume.")
    Investigation.objects.filter(pk=investigation.pk).update(
        status=Investigation.Status.QUEUED, cancel_requested=False, finished_at=None, error=""
    )
    investigation.refresh_from_db()
    investigation_enqueue(investigation=investigation)


def investigations_mark_interrupted(*, stale_after_seconds: int = 120) -> int:
    """Mark runs whose worker stopped sending heartbeats as interrupted (resumable)."""
    cutoff = timezone.now() - timedelta(seconds=stale_after_seconds)
    return Investigation.objects.filter(
        status=Investigation.Status.RUNNING, heartbeat_at__lt=cutoff
    ).update(status=Investigation.Status.INTERRUPTED)


def verdict_override(
    *, investigation: Investigation, user, document_key: str, decision: str, note: str = ""
) -> Verdict:
    """Record a historian's verdict on a document as a new row; the agent's stays untouched."""
    if decision not in Verdict.Decision.values:
        raise InvestigationError(f"Unknown decision {decision!r}.")
    if not investigation.verdicts.filter(document_key=document_key).exists():
        raise InvestigationError("This document has no verdict in this investigation.")
    # Overrides live outside the engine's event sequence, so a resumed run can never collide.
    return Verdict.objects.create(
        investigation=investigation, document_key=document_key, decision=decision,
        rationale=note.strip(), source=Verdict.Source.HUMAN, user=user, note=note.strip(),
    )


def note_add(*, investigation: Investigation, user, document_key: str, note: str) -> DocumentNote:
    """Attach a historian's note to a document without changing its verdict."""
    note = note.strip()
    if not note:
        raise InvestigationError("The note is empty.")
    return DocumentNote.objects.create(
        investigation=investigation, user=user, document_key=document_key, text=note
    )


def investigation_share(*, investigation: Investigation, enable: bool = True) -> str:
    """Create (or revoke) the read-only share link token."""
    token = investigation.new_share_token() if enable else ""
    investigation.share_token = token
    investigation.save(update_fields=["share_token"])
    return token
