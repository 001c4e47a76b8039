"""Persist engine events append-only and project them into sub-questions and verdicts."""

from __future__ import annotations

from django.db import transaction
from django.db.models import F, Max
from django.utils import timezone

from agent.engine.types import Event
from agent.models import Investigation, Step, SubQuestion, Verdict


class DjangoEventSink:
    """EventSink port: one Step row per event; a replayed event (already stored) is skipped."""

    def __init__(self, investigation: Investigation):
        self.investigation = investigation
        last = investigation.steps.aggregate(last=Max("seq"))["last"]
        self.last_persisted_seq = last or 0

    def emit(self, event: Event) -> None:
        if event.seq <= self.last_persisted_seq:
            return  # a resumed run replays what was already recorded
        with transaction.atomic():
            step = Step.objects.create(
                investigation=self.investigation,
                seq=event.seq,
                kind=event.kind,
                subquestion=event.subquestion,
                payload=event.payload,
            )
            project_event(self.investigation, step)
            Investigation.objects.filter(pk=self.investigation.pk).update(
                heartbeat_at=timezone.now()
            )
        self.last_persisted_seq = event.seq

    def cancelled(self) -> bool:
        return Investigation.objects.filter(
            pk=self.investigation.pk, cancel_requested=True
        ).exists()


def project_event(investigation: Investigation, step: Step) -> None:
    """Keep the query-friendly tables in step with the event log."""
    payload = step.payload
    if step.kind == "subquestion_start":
        SubQuestion.objects.update_or_create(
            investigation=investigation,
            index=step.subquestion,
            defaults={
                "text": payload.get("text", ""),
                "target_sub_corpus": payload.get("target_sub_corpus") or "",
                "entities": payload.get("entities") or [],
                "target_date": payload.get("target_date") or "",
            },
        )
    elif step.kind == "verdict":
        Verdict.objects.create(
            investigation=investigation,
            step=step,
            subquestion=step.subquestion,
            chunk_id=payload.get("chunk_id"),
            document_key=payload.get("document_id", ""),
            sub_corpus=payload.get("sub_corpus") or "",
            decision=payload.get("verdict", "hold"),
            rationale=payload.get("rationale", ""),
            auto_held=bool(payload.get("auto_held")),
            source=payload.get("source") or Verdict.Source.AGENT,
        )
    elif step.kind == "llm_call":
        # Live counters for the page; the run's final totals overwrite them when it ends.
        Investigation.objects.filter(pk=investigation.pk).update(
            llm_calls=F("llm_calls") + 1,
            input_tokens=F("input_tokens") + int(payload.get("input_tokens") or 0),
            output_tokens=F("output_tokens") + int(payload.get("output_tokens") or 0),
            cached_tokens=F("cached_tokens") + int(payload.get("cached_tokens") or 0),
            model_seconds=F("model_seconds") + float(payload.get("seconds") or 0.0),
        )
    elif step.kind == "briefing":
        SubQuestion.objects.filter(investigation=investigation, index=step.subquestion).update(
            briefing=payload.get("briefing", payload)
        )
    elif step.kind == "finish" and step.subquestion is not None:
        SubQuestion.objects.filter(investigation=investigation, index=step.subquestion).update(
            finish_reason=payload.get("reason", "")
        )
