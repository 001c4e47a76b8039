"""Reads for the cited answer: what a drafter gets from the sources in force, the draft shown.

The accepted sources in force are those of `source_review.reviewed_sources` (the agent's accepts
after the historian's overrides), numbered as the review page and the citation exports number
them. Each brings the evidence passages its verdicts cite.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.http import Http404

from agent.engine.answer import AnswerMaterial, AnswerSource, EvidencePassage
from agent.models import AnswerDraft, Investigation, Verdict
from agent.sources import Quote, ReviewedSource, SourceState, reviewed_sources


def accepted_in_force(rows: list[ReviewedSource]) -> list[ReviewedSource]:
    """Return the accepted sources in the order in force (the rows keep their numbers)."""
    return [row for row in rows if row.state == SourceState.ACCEPTED]


def answer_material(investigation: Investigation,
                    rows: list[ReviewedSource] | None = None) -> AnswerMaterial:
    """Gather the question, the plan and the accepted sources in force with their evidence."""
    if rows is None:
        rows = reviewed_sources(investigation)
    accepted = accepted_in_force(rows)
    passages = _passages(investigation, accepted)
    sources = []
    for row in accepted:
        document = row.document
        sources.append(AnswerSource(
            number=row.rank or 0, document_key=row.document_key, title=_title(row),
            date=document.date.isoformat() if document is not None and document.date else "",
            passages=tuple(passages.get(row.document_key, ()))))
    plan = {sub_question.index: sub_question.text
            for sub_question in investigation.sub_questions.order_by("index")}
    return AnswerMaterial(question=investigation.question, sub_questions=plan,
                          sources=tuple(sources))


def drafted_from(rows: list[ReviewedSource]) -> list[dict]:
    """Describe the decisions a draft rests on: the accepted sources in force, numbered."""
    return [{"number": row.rank, "document_key": row.document_key, "title": _title(row)}
            for row in accepted_in_force(rows)]


def decisions_changed(draft: AnswerDraft, rows: list[ReviewedSource]) -> bool:
    """Tell whether the accepted sources in force, or their order, differ from the draft's."""
    return draft.source_keys != [row.document_key for row in accepted_in_force(rows)]


@dataclass(frozen=True)
class ShownAnswer:
    """The draft the review page shows, the drafts before it, and whether it is out of date."""

    draft: AnswerDraft | None
    drafts: list[AnswerDraft]  # newest first
    decisions_changed: bool
    quotes_changed: bool = False  # a quote was kept in the viewer after the draft

    @property
    def is_latest(self) -> bool:
        return self.draft is not None and self.draft.pk == self.drafts[0].pk

    @property
    def titles(self) -> dict[int, str]:
        """The cited sources' titles by their number in the shown draft."""
        if self.draft is None:
            return {}
        return {source["number"]: source["title"] for source in self.draft.sources}


def shown_answer(investigation: Investigation, rows: list[ReviewedSource],
                 draft_id: int | None = None) -> ShownAnswer:
    """Return the draft asked for (the newest by default) and every draft, newest first."""
    drafts = list(investigation.answer_drafts.select_related("user").order_by("-created_at",
                                                                              "-id"))
    if draft_id is None:
        draft = drafts[0] if drafts else None
    else:
        draft = next((d for d in drafts if d.pk == draft_id), None)
        if draft is None:
            raise Http404("No such draft of this investigation's answer")
    changed = draft is not None and decisions_changed(draft, rows)
    quotes = draft is not None and investigation.evidence_picks.filter(
        created_at__gt=draft.created_at).exists()
    return ShownAnswer(draft=draft, drafts=drafts, decisions_changed=changed,
                       quotes_changed=quotes)


def latest_draft(investigation: Investigation) -> AnswerDraft | None:
    """Return the newest draft of the investigation's answer, if any."""
    if investigation.pk is None:  # an investigation not yet saved has no draft
        return None
    return investigation.answer_drafts.select_related("user").order_by("-created_at",
                                                                       "-id").first()


def _title(row: ReviewedSource) -> str:
    return getattr(row.document, "title", "") or row.document_key


def _passages(investigation: Investigation,
              accepted: list[ReviewedSource]) -> dict[str, list[EvidencePassage]]:
    """Return each source's evidence: the spans its accepting verdicts cite, in their order.

    A source the historian accepted against the agent has no accepting verdict: the evidence
    the review page quotes for it stands in (the span another verdict cites, else the opening
    sentences of its best passage). A quote the historian kept in the viewer is in force over
    the agent's: it is the source's one passage, under the sub-question of the agent's first.
    """
    keys = [row.document_key for row in accepted]
    verdicts = (investigation.verdicts.filter(document_key__in=keys,
                                              decision=Verdict.Decision.ACCEPT,
                                              evidence_start__isnull=False,
                                              evidence_end__isnull=False)
                .exclude(source=Verdict.Origin.HUMAN).exclude(evidence_text="").order_by("id"))
    found: dict[str, list[EvidencePassage]] = {}
    for verdict in verdicts.only("document_key", "sub_question_index", "evidence_start",
                                 "evidence_end", "evidence_text"):
        start, end = verdict.evidence_start, verdict.evidence_end
        if start is None or end is None:  # excluded by the query; said again for the types
            continue
        passages = found.setdefault(verdict.document_key, [])
        if all((p.start, p.end) != (start, end) for p in passages):
            passages.append(EvidencePassage(start, end, verdict.evidence_text,
                                            verdict.sub_question_index))
    for row in accepted:
        evidence = row.evidence
        picked = evidence is not None and evidence.origin == "historian"
        if ((row.document_key in found and not picked) or evidence is None
                or evidence.start is None or evidence.end is None):
            continue
        agents = found.get(row.document_key)
        if agents:
            index = agents[0].sub_question_index
        else:
            index = row.sub_question_indexes[0] if row.sub_question_indexes else None
        found[row.document_key] = [EvidencePassage(evidence.start, evidence.end,
                                                   _document_text(row, evidence), index)]
    return found


def _document_text(row: ReviewedSource, evidence: Quote) -> str:
    """The document's own characters in the quote's range when they are at hand, else its text.

    A picked quote is stored with its spaces folded; the document's characters let the
    extractive drafter cite each quoted sentence by its own offsets.
    """
    text = getattr(row.document, "text", None)
    if (evidence.origin == "historian" and isinstance(text, str) and evidence.start is not None
            and evidence.end is not None and evidence.end <= len(text)):
        return text[evidence.start:evidence.end]
    return evidence.text
