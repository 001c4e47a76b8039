"""Template context shared by every page."""

from agent.policies import policy_identity


def trace(request):
    """Expose which policy runs new investigations, so every page can say it."""
    kind, label, _models = policy_identity()
    return {"trace_policy_label": label, "trace_llm_configured": kind == "llm"}
