"""Close a sub-question: re-evaluate held chunks, then write its briefing."""

from __future__ import annotations

from collections.abc import Callable

from agent.engine.events import BriefingWritten, HeldReevaluated, StageFailed
from agent.engine.loop import LoopEnv, truncate, verdict_event
from agent.engine.policy import BriefContext, HeldContext, ModelCallSummary
from agent.engine.retry import ask_with_retries
from agent.engine.schemas import Briefing
from agent.engine.state import LoopState
from agent.engine.types import AcceptedChunk


def _decide[T](env: LoopEnv, index: int, stage: str,
               decide: Callable[[list[ModelCallSummary]], T]) -> T | None:
    """Ask with retries; report an error event when no reply was usable."""
    value = ask_with_retries(env.recorder, index, stage, env.config.stage_attempts, decide).value
    if value is None:
        env.recorder.emit(StageFailed(stage=stage, message="no usable reply", fallback=True),
                          sub_question_index=index)
    return value


def reevaluate_held(env: LoopEnv, state: LoopState) -> None:
    """Promote held chunks the accumulated evidence supports (one call; none if nothing held)."""
    if not state.held.items:
        return
    ctx = HeldContext(question=env.question, index=state.index, sub_question=state.sub_question,
                      memory=state.memory, accepted=list(state.accepted),
                      held=list(state.held.items))
    output = _decide(env, state.index, "held_reeval",
                     lambda calls: env.policy.reevaluate_held(ctx, calls))
    promoted: list[int] = []
    ignored: list[int] = []
    for promotion in output.promotions if output is not None else []:
        held = state.held.remove(promotion.chunk_id)
        if held is None:
            ignored.append(promotion.chunk_id)
            continue
        hit = held.hit
        rationale, cut = truncate(promotion.rationale or held.rationale, env.config.rationale_max)
        evidence = (env.evidence(hit, state.sub_question, promotion.quote)
                    if promotion.quote.strip() else held.evidence)
        state.accepted.append(AcceptedChunk(
            chunk_id=hit.chunk_id, document_key=hit.document_key, sub_corpus=hit.sub_corpus,
            rationale=rationale, source="held_reeval", title=hit.title, date=hit.date,
            signals=promotion.signals, evidence=evidence))
        state.accepted_documents.add(hit.document_key)
        promoted.append(hit.chunk_id)
        env.recorder.emit(verdict_event(hit, "accept", rationale, source="held_reeval",
                                        auto_held=held.auto_held, rationale_truncated=cut,
                                        signals=promotion.signals, evidence=evidence,
                                        model_call_seq=env.recorder.last_model_call_seq),
                          sub_question_index=state.index)
    env.recorder.emit(HeldReevaluated(
        promoted=tuple(promoted), kept=tuple(h.hit.chunk_id for h in state.held.items),
        ignored=tuple(ignored), rationale=output.rationale if output is not None else ""),
        sub_question_index=state.index)


def fallback_briefing(state: LoopState) -> Briefing:
    """Build a plain briefing from the accepted set when the policy gives none."""
    return Briefing(
        summary=f"{len(state.accepted)} source(s) accepted for: {state.sub_question.text}",
        confirmed_facts=[a.rationale for a in state.accepted if a.rationale],
        confirmed_dates=sorted({a.date for a in state.accepted if a.date}),
        confirmed_entities=list(state.sub_question.entities),
        gaps=[] if state.accepted else ["no source accepted"],
        search_hints=[],
    )


def write_briefing(env: LoopEnv, state: LoopState, finish_reason: str) -> Briefing:
    """Ask for the sub-question's briefing and emit it."""
    ctx = BriefContext(question=env.question, index=state.index, sub_question=state.sub_question,
                       memory=state.memory, accepted=list(state.accepted),
                       accepted_text={a.chunk_id: state.texts.get(a.chunk_id, "")
                                      for a in state.accepted},
                       held=list(state.held.items), finish_reason=finish_reason)
    briefing = _decide(env, state.index, "briefing", lambda calls: env.policy.brief(ctx, calls))
    fallback = briefing is None
    written = briefing or fallback_briefing(state)
    env.recorder.emit(BriefingWritten(**written.model_dump(), fallback=fallback),
                      sub_question_index=state.index)
    return written
