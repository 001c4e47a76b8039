"""Close a sub-question: re-evaluate held chunks, then write its briefing."""

from __future__ import annotations

from typing import Any

from agent.engine.config import EngineConfig
from agent.engine.events import Recorder
from agent.engine.loop import LoopEnv, truncate
from agent.engine.parsing import OutputParseError
from agent.engine.policy import BriefContext, HeldContext
from agent.engine.schemas import Briefing, HeldReevalOutput
from agent.engine.state import LoopState
from agent.engine.types import AcceptedChunk


def _attempt[T](recorder: Recorder, index: int, stage: str, config: EngineConfig,
                decide: Any) -> T | None:
    for _ in range(max(1, config.stage_attempts)):
        try:
            result: T = recorder.invoke(index, decide)
            return result
        except OutputParseError as exc:
            recorder.emit("feedback", index, {"reason": "parse_failure", "stage": stage,
                                              "message": str(exc)})
    recorder.emit("error", index, {"stage": stage, "message": "no usable reply",
                                   "fallback": True})
    return None


def reevaluate_held(env: LoopEnv, state: LoopState) -> None:
    """Promote held chunks the accumulated evidence supports (one call; none if nothing held)."""
    if not state.held.items:
        return
    ctx = HeldContext(question=env.question, index=state.index, sub_question=state.sub_question,
                      memory=state.memory, accepted=list(state.accepted),
                      held=list(state.held.items))
    output: HeldReevalOutput | None = _attempt(
        env.recorder, state.index, "held_reeval", env.config,
        lambda calls: env.policy.reevaluate_held(ctx, calls))
    promoted: list[int] = []
    ignored: list[int] = []
    for promotion in output.promotions if output is not None else []:
        held = state.held.remove(promotion.chunk_id)
        if held is None:
            ignored.append(promotion.chunk_id)
            continue
        candidate = held.candidate
        rationale, cut = truncate(promotion.rationale or held.rationale, env.config.rationale_max)
        state.accepted.append(AcceptedChunk(
            chunk_id=candidate.chunk_id, document_id=candidate.document_id,
            sub_corpus=candidate.sub_corpus, rationale=rationale, source="held_reeval",
            title=candidate.title, date=candidate.date))
        state.accepted_documents.add(candidate.document_id)
        promoted.append(candidate.chunk_id)
        env.recorder.emit("verdict", state.index, {
            "chunk_id": candidate.chunk_id, "document_id": candidate.document_id,
            "sub_corpus": candidate.sub_corpus, "verdict": "accept", "rationale": rationale,
            "auto_held": held.auto_held, "source": "held_reeval", "rationale_truncated": cut})
    env.recorder.emit("held_reeval", state.index, {
        "promoted": promoted, "kept": [h.candidate.chunk_id for h in state.held.items],
        "ignored": ignored, "rationale": output.rationale if output is not None else ""})


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


def write_briefing(env: LoopEnv, state: LoopState, finish_reason: str) -> dict[str, Any]:
    """Ask for the sub-question's briefing and emit it."""
    ctx = BriefContext(question=env.question, index=state.index, sub_question=state.sub_question,
                       memory=state.memory, accepted=list(state.accepted),
                       accepted_text={a.chunk_id: state.texts.get(a.chunk_id, "")
                                      for a in state.accepted},
                       held=list(state.held.items), finish_reason=finish_reason)
    briefing: Briefing | None = _attempt(env.recorder, state.index, "briefing", env.config,
                                         lambda calls: env.policy.brief(ctx, calls))
    fallback = briefing is None
    data = (briefing or fallback_briefing(state)).model_dump()
    env.recorder.emit("briefing", state.index, {**data, "fallback": fallback})
    return data
