"""Choose what decides verdicts: the configured LLM, or the offline policy when none is set."""

from __future__ import annotations

import dataclasses

from django.conf import settings

from agent.engine.config import EngineConfig
from agent.models import Investigation

OFFLINE_LABEL = "offline policy (no LLM)"


def policy_identity() -> tuple[str, str, dict[str, str]]:
    """Return (policy kind, label shown everywhere, model per role) for new investigations."""
    if settings.TRACE_LLM_BASE_URL:
        models = {"planner": settings.TRACE_LLM_PLANNER_MODEL,
                  "agent": settings.TRACE_LLM_AGENT_MODEL,
                  "reranker": settings.TRACE_LLM_RERANKER_MODEL}
        return "llm", f"LLM: {settings.TRACE_LLM_AGENT_MODEL}", models
    return "offline", OFFLINE_LABEL, {}


def engine_config(stored: dict | None = None) -> EngineConfig:
    """Rebuild the engine settings an investigation was created with (defaults otherwise)."""
    if not stored:
        return EngineConfig()
    known = {f.name for f in dataclasses.fields(EngineConfig)}
    return EngineConfig(**{k: v for k, v in stored.items() if k in known})


def build_policy(investigation: Investigation):
    """Return the policy that runs this investigation (replaying model replies already paid)."""
    if investigation.policy == "llm":
        from agent.chat import configured_chat_model, resumable_chat_model
        from agent.engine.llm_policy import LLMPolicy

        return LLMPolicy(resumable_chat_model(configured_chat_model(), investigation))
    from agent.engine.offline import OfflinePolicy

    return OfflinePolicy()
