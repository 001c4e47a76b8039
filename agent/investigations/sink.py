"""Persist engine events append-only and project them into sub-questions and verdicts."""

from __future__ import annotations

import dataclasses

from django.db import transaction
from django.db.models import F, Max
from django.db.models.expressions import CombinedExpression
from django.utils import timezone

from agent.engine.events import (
    Event,
    ModelCalled,
    SubQuestionStarted,
    VerdictGiven,
)
from agent.investigations.durability import with_reconnect
from agent.models import Investigation, Step, SubQuestion, Verdict
from archive.selectors import ocr_offsets
from common.usage import TokenUsage


def usage_added(usage: TokenUsage) -> dict[str, CombinedExpression]:
    """Return the update that adds `usage` to a row's stored token counts, in the database."""
    return {name: F(name) + count for name, count in usage.as_fields().items()}


class DjangoEventSink:
    """EventSink port: one Step row per event; a replayed event (already stored) is skipped."""

    def __init__(self, investigation: Investigation):
        self.investigation = investigation
        last = investigation.steps.aggregate(last=Max("seq"))["last"]
        self.last_persisted_seq = last or 0

    def emit(self, event: Event) -> None:
        """Store the event and update the tables projected from it, in one transaction."""
        if event.seq <= self.last_persisted_seq:
            return  # a resumed run replays what was already recorded
        with_reconnect(lambda: self._store(event))
        self.last_persisted_seq = event.seq

    def _store(self, event: Event) -> None:
        event = _evidence_in_ocr_offsets(event)
        with transaction.atomic():
            step = Step.from_event(self.investigation, event)
            step.save()
            project_event(self.investigation, step, event)
            Investigation.objects.filter(pk=self.investigation.pk).update(
                heartbeat_at=timezone.now()
            )

    def cancelled(self) -> bool:
        """Tell the engine to stop: the run was cancelled, or another process took it over."""
        owned = Investigation.objects.filter(
            pk=self.investigation.pk, cancel_requested=False,
            status=Investigation.Status.RUNNING, attempts=self.investigation.attempts,
        )
        return not with_reconnect(owned.exists)


def _evidence_in_ocr_offsets(event: Event) -> Event:
    """A verdict's evidence found in a corrected chunk, its offsets carried onto the OCR text.

    Its text stays the corrected words it quotes (archive/corrections.py).
    """
    if not isinstance(event, VerdictGiven) or event.evidence is None:
        return event
    evidence = event.evidence
    start, end = ocr_offsets(event.chunk_id, evidence.start, evidence.end, evidence.text)
    if (start, end) == (evidence.start, evidence.end):
        return event
    return dataclasses.replace(event, evidence=dataclasses.replace(evidence, start=start, end=end))


def project_event(investigation: Investigation, step: Step, event: Event) -> None:
    """Keep the query-friendly tables in step with the event log."""
    if isinstance(event, SubQuestionStarted) and event.sub_question_index is not None:
        SubQuestion.objects.update_or_create(
            investigation=investigation,
            index=event.sub_question_index,
            defaults={
                "text": event.text,
                "target_sub_corpus": event.target_sub_corpus or "",
                "entities": list(event.entities),
                "target_date": event.target_date or "",
            },
        )
    elif isinstance(event, VerdictGiven):
        Verdict.objects.create(
            investigation=investigation,
            step=step,
            sub_question_index=event.sub_question_index,
            chunk_id=event.chunk_id,
            document_key=event.document_key,
            sub_corpus=event.sub_corpus or "",
            decision=event.verdict,
            rationale=event.rationale,
            auto_held=event.auto_held,
            source=event.source or Verdict.Origin.AGENT,
            evidence_start=event.evidence.start if event.evidence else None,
            evidence_end=event.evidence.end if event.evidence else None,
            evidence_text=event.evidence.text if event.evidence else "",
            probability=event.signals.probability if event.signals else None,
        )
    elif isinstance(event, ModelCalled):
        # Live counters for the page; the run's final totals overwrite them when it ends.
        Investigation.objects.filter(pk=investigation.pk).update(
            llm_calls=F("llm_calls") + 1,
            **usage_added(event.usage),
            model_seconds=F("model_seconds") + event.seconds,
        )
