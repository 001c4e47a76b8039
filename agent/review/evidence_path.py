"""The evidence path of a source: question, sub-question, search, chunk, verdict, rationale."""

from __future__ import annotations

from dataclasses import dataclass

from django.http import Http404

from agent.engine.events import SearchRan, WarmStartRan
from agent.models import Investigation, Verdict
from archive.models import Chunk

SEARCH_KINDS = (SearchRan.kind, WarmStartRan.kind)


@dataclass
class EvidenceLink:
    """One path question → sub-question → search → chunk → verdict → rationale."""

    verdict: Verdict
    sub_question_text: str
    search: SearchRan | WarmStartRan | None
    chunk: object | None


def evidence_path(investigation: Investigation, document_key: str) -> list[EvidenceLink]:
    """Return every agent verdict on the document with the search that surfaced its chunk."""

    verdicts = list(
        investigation.verdicts.filter(document_key=document_key)
        .select_related("step", "user").order_by("id")
    )
    if not verdicts:
        raise Http404("This document has no verdict in this investigation")
    sub_question_texts = {sq.index: sq.text for sq in investigation.sub_questions.all()}
    searches = [event for step in investigation.steps.filter(kind__in=SEARCH_KINDS).order_by("seq")
                if isinstance(event := step.event, SearchRan | WarmStartRan)]
    chunks = Chunk.objects.in_bulk([v.chunk_id for v in verdicts if v.chunk_id])
    links = []
    for verdict in verdicts:
        search = None
        if verdict.step is not None and verdict.chunk_id:
            for found in searches:
                if found.seq > verdict.step.seq:
                    break
                if (found.sub_question_index == verdict.sub_question_index
                        and verdict.chunk_id in found.chunk_ids):
                    search = found
        links.append(EvidenceLink(
            verdict=verdict,
            sub_question_text=("" if verdict.sub_question_index is None
                              else sub_question_texts.get(verdict.sub_question_index, "")),
            search=search,
            chunk=chunks.get(verdict.chunk_id),
        ))
    return links


def evidence_range(investigation: Investigation, document_key: str,
                   chunk_id: int | None = None) -> str:
    """Return "start-end" of the evidence a verdict on the document cites, accepts first."""
    verdicts = (investigation.verdicts.filter(document_key=document_key,
                                              evidence_start__isnull=False,
                                              evidence_end__isnull=False)
                .exclude(source=Verdict.Origin.HUMAN))
    if chunk_id is not None and verdicts.filter(chunk_id=chunk_id).exists():
        verdicts = verdicts.filter(chunk_id=chunk_id)
    accepted = verdicts.filter(decision=Verdict.Decision.ACCEPT).order_by("-id").first()
    verdict = accepted or verdicts.order_by("-id").first()
    if verdict is None or verdict.evidence_start is None or verdict.evidence_end is None:
        return ""
    return f"{verdict.evidence_start}-{verdict.evidence_end}"

