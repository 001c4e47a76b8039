"""Choose what decides verdicts: the configured LLM, or the offline policy when none is set."""

from __future__ import annotations

import dataclasses

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db import models

from agent.engine.config import EngineConfig
from agent.engine.policy_spec import OFFLINE_LABEL, PolicyKind, PolicySpec


class PolicyChoice(models.TextChoices):
    """The engine's PolicyKind, as stored on an investigation."""

    OFFLINE = PolicyKind.OFFLINE.value, OFFLINE_LABEL
    LLM = PolicyKind.LLM.value, "LLM"


NO_ENDPOINT_MESSAGE = (
    "The LLM policy needs a model endpoint (TRACE_LLM_BASE_URL) and none is configured on this "
    "instance; set it, or ask the question again to run it with the offline policy."
)


def endpoint_configured() -> bool:
    """Tell whether a model endpoint is configured (a blank value is none)."""
    return bool((settings.TRACE_LLM_BASE_URL or "").strip())


def require_usable_policy(policy: str) -> None:
    """Refuse a policy this instance cannot run: the LLM policy without an endpoint."""
    if policy == PolicyChoice.LLM and not endpoint_configured():
        raise ImproperlyConfigured(NO_ENDPOINT_MESSAGE)


def role_models() -> dict[str, str]:
    """Return the configured model name per role."""
    return {"planner": settings.TRACE_LLM_PLANNER_MODEL,
            "agent": settings.TRACE_LLM_AGENT_MODEL,
            "reranker": settings.TRACE_LLM_RERANKER_MODEL}


def configured_policy() -> PolicySpec:
    """Return the policy new investigations run with, read from the TRACE_LLM_* settings."""
    prices = {"price_input_per_million": settings.TRACE_LLM_PRICE_INPUT_PER_M,
              "price_output_per_million": settings.TRACE_LLM_PRICE_OUTPUT_PER_M}
    if endpoint_configured():
        return PolicySpec(PolicyKind.LLM, role_models(), **prices)
    return PolicySpec(PolicyKind.OFFLINE, {}, **prices)


def engine_config(stored: dict | None = None) -> EngineConfig:
    """Rebuild the engine settings an investigation was created with (defaults otherwise)."""
    if not stored:
        return EngineConfig()
    known = {f.name for f in dataclasses.fields(EngineConfig)}
    return EngineConfig(**{k: v for k, v in stored.items() if k in known})
