"""Template context shared by every page."""

from django.conf import settings


def trace(request):
    """Expose which policy runs investigations, so every page can say it."""
    llm = bool(settings.TRACE_LLM_BASE_URL)
    return {
        "trace_policy_label": f"LLM: {settings.TRACE_LLM_AGENT_MODEL}" if llm
        else "offline policy (no LLM)",
        "trace_llm_configured": llm,
    }
