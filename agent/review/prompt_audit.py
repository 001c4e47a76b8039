"""Find the exact prompts behind an agent's verdict, for the evidence path."""

from __future__ import annotations

from agent.engine.events import ModelCalled, VerdictGiven
from agent.models import LLMCall, Step, Verdict

# Verdicts decided by a model call (the others come from rules or from a historian).
MODEL_DECIDED = frozenset({Verdict.Origin.AGENT, Verdict.Origin.HELD_REEVAL})


def model_call_for_verdict(verdict: Verdict) -> LLMCall | None:
    """Return the stored model call whose reply gave this verdict, with its prompt texts.

    The verdict's event names its model call by the `seq` of that call's `llm_call` event.
    """
    if verdict.source not in MODEL_DECIDED or verdict.step is None:
        return None
    decided = verdict.step.event
    if not isinstance(decided, VerdictGiven) or decided.model_call_seq is None:
        return None
    call_step = Step.objects.filter(investigation_id=verdict.investigation_id,
                                    seq=decided.model_call_seq).first()
    called = call_step.event if call_step is not None else None
    if not isinstance(called, ModelCalled):
        return None
    prompt_hash = called.prompt_hash
    return (LLMCall.objects.filter(investigation_id=verdict.investigation_id,
                                   prompt_hash=prompt_hash, succeeded=True)
            .select_related("system_prompt", "user_prompt").order_by("ordinal").first())
