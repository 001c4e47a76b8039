"""Find the exact prompts behind an agent's verdict, for the evidence path."""

from __future__ import annotations

from agent.engine.events import ModelCalled
from agent.models import LLMCall, Step, Verdict

# Verdicts decided by a model call (the others come from rules or from a historian).
MODEL_DECIDED = frozenset({Verdict.Source.AGENT, Verdict.Source.HELD_REEVAL})


def model_call_for_verdict(verdict: Verdict) -> LLMCall | None:
    """Return the stored model call whose reply gave this verdict, with its prompt texts.

    The engine records a decision's model call just before the events the decision produces,
    in the same sub-question: the latest llm_call step before the verdict's step is its call.
    """
    if verdict.source not in MODEL_DECIDED or verdict.step_id is None:
        return None
    step = verdict.step
    if step is None:
        return None
    call_step = (Step.objects.filter(investigation_id=verdict.investigation_id,
                                     kind=ModelCalled.kind, seq__lt=step.seq,
                                     sub_question_index=verdict.sub_question_index)
                 .order_by("-seq").only("payload").first())
    prompt_hash = (call_step.payload or {}).get("prompt_hash") if call_step else None
    if not prompt_hash:
        return None
    return (LLMCall.objects.filter(investigation_id=verdict.investigation_id,
                                   prompt_hash=prompt_hash, succeeded=True)
            .select_related("system_prompt", "user_prompt").order_by("ordinal").first())
