"""Template context shared by every page."""

from agent.engine.policy_spec import PolicyKind
from agent.investigations.judges import judge_in_use
from agent.policies import configured_policy


def trace(request):
    """Expose which policy runs new investigations, so every page can say it."""
    policy = configured_policy()
    return {"trace_policy_label": policy.label,
            "trace_llm_configured": policy.kind is PolicyKind.LLM,
            "trace_judge_label": judge_in_use().label}
