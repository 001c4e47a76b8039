"""A run in a worker: claim it, build its policy, run the engine with the persisting sink, record
how it ended. The task (`tasks.execute_investigation`) calls `investigation_execute`."""

from __future__ import annotations

import logging
import time

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from agent.engine.investigation import run_investigation as engine_run
from agent.engine.llm_policy import LLMPolicy
from agent.engine.policy import Policy
from agent.engine.ports import Retriever
from agent.investigations.chat import (
    configured_chat_model,
    failure_message,
    paid_usage,
    resumable_chat_model,
)
from agent.investigations.durability import (
    CONNECTION_ERRORS,
    Heartbeat,
    stale_after,
    with_reconnect,
)
from agent.investigations.judges import model_screen, offline_policy
from agent.investigations.retriever import ArchiveRetriever
from agent.investigations.sink import DjangoEventSink
from agent.models import Investigation
from agent.policies import PolicyChoice, engine_config, require_usable_policy

logger = logging.getLogger(__name__)


def investigation_execute(*, investigation_id: int, retriever: Retriever | None = None,
                          policy: Policy | None = None) -> Investigation:
    """Run (or resume) the engine for one investigation, persisting every event as it happens."""

    investigation = with_reconnect(lambda: _claim(investigation_id))
    if investigation is None:
        return Investigation.objects.get(pk=investigation_id)

    try:
        # Beat from the claim on: opening the archive's indexes may take a while.
        with Heartbeat(investigation_id, investigation.attempts):
            sink = DjangoEventSink(investigation)
            if retriever is None:
                retriever = ArchiveRetriever()
            policy = policy or build_policy(investigation)
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
    except CONNECTION_ERRORS as exc:
        # The database went away under the run: nothing is wrong with the run itself.
        logger.warning("investigation %s interrupted: %s", investigation_id, exc)
        message = f"Interrupted: the database connection was lost ({type(exc).__name__})."
        with_reconnect(lambda: _owned(investigation).transition_to(
            Investigation.Status.INTERRUPTED, error=message,
        ))
        raise
    except Exception as exc:
        logger.exception("investigation %s failed", investigation_id)

        message = failure_message(exc)
        # Paid model calls stay billed when the run fails: count them from the stored calls.
        with_reconnect(lambda: _owned(investigation).transition_to(
            Investigation.Status.FAILED, error=message,
            finished_at=timezone.now(), **paid_usage(investigation_id).as_fields(),
        ))
        raise
    counters = result.counters
    cost = investigation.policy_spec.cost(counters.usage)
    status = (Investigation.Status.CANCELLED if result.status == "cancelled"
              else Investigation.Status.FINISHED)
    with_reconnect(lambda: _owned(investigation).transition_to(
        status, finished_at=timezone.now(), ranked_keys=list(result.ranked_document_keys),
        llm_calls=counters.llm_calls, **counters.usage.as_fields(),
        model_seconds=counters.model_seconds, engine_seconds=counters.engine_seconds,
        cost=cost, cancel_requested=False,
    ))
    investigation.refresh_from_db()
    return investigation


def build_policy(investigation: Investigation) -> Policy:
    """Return the policy that runs this investigation (replaying model replies already paid)."""
    require_usable_policy(investigation.policy)
    if investigation.policy == PolicyChoice.LLM:
        return LLMPolicy(resumable_chat_model(configured_chat_model(investigation.models_used),
                                              investigation), screen=model_screen())

    return offline_policy(shift=investigation.judge_shift)


def _owned(investigation: Investigation):
    """Select the row only while this attempt still owns it (a stale run may be taken over)."""
    return Investigation.objects.filter(
        pk=investigation.pk, attempts=investigation.attempts,
        status=Investigation.Status.RUNNING,
    )


def _claim(investigation_id: int) -> Investigation | None:
    """Take the run for this process, or return None if it is done or alive elsewhere."""
    with transaction.atomic():
        investigation = Investigation.objects.select_for_update().get(pk=investigation_id)
        if investigation.status in (Investigation.Status.FINISHED, Investigation.Status.CANCELLED):
            return None
        if investigation.status == Investigation.Status.RUNNING and _heartbeat_fresh(investigation):
            seen = investigation.heartbeat_at
        else:
            return _take(investigation)
    # A fresh heartbeat may belong to a process that just died (a killed pool process whose
    # task came back at once): watch it for two beats before believing it.
    deadline = time.monotonic() + 2.5 * settings.TRACE_HEARTBEAT_SECONDS
    while time.monotonic() < deadline:
        time.sleep(min(0.5, settings.TRACE_HEARTBEAT_SECONDS / 4))
        if Investigation.objects.filter(pk=investigation_id).exclude(heartbeat_at=seen).exists():
            logger.warning("investigation %s is already running elsewhere", investigation_id)
            return None
    with transaction.atomic():
        investigation = Investigation.objects.select_for_update().get(pk=investigation_id)
        status, beat = investigation.status, investigation.heartbeat_at
        if status != Investigation.Status.RUNNING or beat != seen:
            return None  # someone else acted on it meanwhile
        logger.warning("investigation %s: taking over a run whose process died", investigation_id)
        return _take(investigation)


def _take(investigation: Investigation) -> Investigation:
    investigation.transition_to(
        Investigation.Status.RUNNING, attempts=investigation.attempts + 1, error="",
        started_at=investigation.started_at or timezone.now(), heartbeat_at=timezone.now(),
    )
    return investigation


def _heartbeat_fresh(investigation: Investigation) -> bool:
    beat = investigation.heartbeat_at
    return beat is not None and timezone.now() - beat < stale_after()

