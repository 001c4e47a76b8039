"""Writes of the historian's review: overrides, picked quotes, notes, order, the cited answer."""

from __future__ import annotations

from django.core.exceptions import ImproperlyConfigured

from agent.engine.answer import AnswerMaterial, DraftedAnswer
from agent.engine.answer_extractive import extractive_answer
from agent.engine.answer_llm import AnswerReplyError, model_answer
from agent.engine.openai_chat import ChatModelError
from agent.investigations.chat import configured_chat_model
from agent.investigations.question_limits import NOTE_MAX_CHARS
from agent.investigations.services import InvestigationError
from agent.models import (
    AnswerDraft,
    DocumentNote,
    EvidencePick,
    Investigation,
    SourceOrder,
    Verdict,
)
from agent.policies import PolicyChoice, require_usable_policy
from agent.review.cited_answer import answer_material, drafted_from
from agent.sources import reviewed_sources
from archive.models import Document
from archive.selectors import corrected_text, document_by_key
from common.usage import TokenUsage
from common.user_text import text_problem


def require_verdict(investigation: Investigation, document_key: str) -> None:
    """Refuse a document the investigation holds no verdict on (it is none of its sources)."""
    if not investigation.verdicts.filter(document_key=document_key).exists():
        raise InvestigationError("This document has no verdict in this investigation.")


def source_document(investigation: Investigation, document_key: str) -> Document:
    """The archive's document of one of the investigation's sources; refused when it is none of
    them or the archive no longer holds it."""
    require_verdict(investigation, document_key)
    document = document_by_key(document_key)
    if document is None:
        raise InvestigationError("This document is no longer in the archive.")
    return document


def verdict_override(
    *, investigation: Investigation, user, document_key: str, decision: str, note: str = ""
) -> Verdict:
    """Record a historian's verdict on a document as a new row; the agent's stays untouched."""
    if decision not in Verdict.Decision.values:
        raise InvestigationError(f"Unknown decision {decision!r}.")
    _check_note(note, label="the reason")
    require_verdict(investigation, document_key)
    # Overrides live outside the engine's event sequence, so a resumed run can never collide.
    return Verdict.objects.create(
        investigation=investigation, document_key=document_key, decision=decision,
        rationale=note.strip(), source=Verdict.Origin.HUMAN, user=user, note=note.strip(),
    )


QUOTE_MAX_CHARS = 2000  # a picked quote: a few sentences, never a whole document


def evidence_pick(*, investigation: Investigation, user, document_key: str, start: int,
                  end: int) -> EvidencePick:
    """Record the passage the historian quotes for a source (a new row; the agent's is kept)."""
    document = source_document(investigation, document_key)
    if not 0 <= start < end <= len(document.text):
        raise InvestigationError("The quote must lie inside the document.")
    if end - start > QUOTE_MAX_CHARS:
        raise InvestigationError(f"A quote holds at most {QUOTE_MAX_CHARS} characters.")
    text = " ".join(corrected_text(document, start, end).split())  # the OCR as corrected
    if not text:
        raise InvestigationError("The quote is empty.")
    return EvidencePick.objects.create(investigation=investigation, user=user,
                                       document_key=document_key, start=start, end=end, text=text)


def _check_note(note: str, *, label: str) -> None:
    if problem := text_problem(note, label=label, max_chars=NOTE_MAX_CHARS):
        raise InvestigationError(f"{problem[0].upper()}{problem[1:]}. Nothing was saved.")


def note_add(*, investigation: Investigation, user, document_key: str, note: str) -> DocumentNote:
    """Attach a historian's note to a document without changing its verdict."""
    note = note.strip()
    if not note:
        raise InvestigationError("The note is empty.")
    _check_note(note, label="the note")
    require_verdict(investigation, document_key)
    return DocumentNote.objects.create(
        investigation=investigation, user=user, document_key=document_key, text=note
    )


def sources_reorder(
    *, investigation: Investigation, user, document_keys: list[str]
) -> SourceOrder:
    """Record the historian's order of the accepted sources as a new row (orders are events)."""
    keys = [key for key in document_keys if key]
    if not keys:
        raise InvestigationError("The order is empty.")
    if len(set(keys)) != len(keys):
        raise InvestigationError("The order names a source twice.")
    known = set(investigation.verdicts.filter(document_key__in=keys)
                .values_list("document_key", flat=True))
    if unknown := [key for key in keys if key not in known]:
        raise InvestigationError(f"No verdict in this investigation for {unknown[0]!r}.")
    return SourceOrder.objects.create(investigation=investigation, user=user,
                                      document_keys=keys)


def answer_draft(*, investigation: Investigation, user) -> AnswerDraft:
    """Draft the cited answer from the accepted sources in force and keep it as a new draft.

    The investigation's policy picks the drafter: the offline policy quotes the evidence
    (`answer_extractive`), the LLM policy asks the configured model (`answer_llm`). Refused while
    the run is still going and when no source is accepted; nothing is saved when refused.
    """

    investigation.refresh_from_db(fields=["status"])
    if investigation.is_active:
        raise InvestigationError(f"The run is still going ({investigation.status}): the answer "
                                 "can be drafted once it has ended.")
    rows = reviewed_sources(investigation)
    material = answer_material(investigation, rows)
    if not material.sources:
        raise InvestigationError("No source is accepted: accept the sources that answer the "
                                 "question, then draft the answer.")
    drafted: DraftedAnswer
    if investigation.policy == PolicyChoice.LLM:
        drafted = _model_answer(material, investigation.models_used)
    else:
        drafted = extractive_answer(material)
    usage = TokenUsage.total(call.usage for call in drafted.model_calls)
    return AnswerDraft.objects.create(
        investigation=investigation, user=user, drafter=drafted.drafter.value,
        sources=drafted_from(rows), sections=drafted.sections_json(), dropped=drafted.dropped,
        model=next((call.model for call in reversed(drafted.model_calls)), ""),
        input_tokens=usage.input_tokens, output_tokens=usage.output_tokens,
        cost=investigation.policy_spec.cost(usage), reply=drafted.reply,
    )


def _model_answer(material: AnswerMaterial, models: dict[str, str]) -> DraftedAnswer:
    """Ask the configured model for the answer; an unusable reply or endpoint is a refusal."""

    try:
        require_usable_policy(PolicyChoice.LLM)
        return model_answer(material, configured_chat_model(models))
    except ImproperlyConfigured as exc:
        raise InvestigationError(str(exc)) from exc
    except (AnswerReplyError, ChatModelError) as exc:
        raise InvestigationError(f"{exc} No draft was saved.") from exc

