"""Choose what decides verdicts: the configured LLM, or the offline policy when none is set."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db import models

from agent.engine.config import EngineConfig
from agent.engine.policy import Policy
from agent.engine.policy_spec import OFFLINE_LABEL, PolicyKind, PolicySpec

if TYPE_CHECKING:
    from agent.models import Investigation


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


def investigation_policy(investigation: Investigation) -> PolicySpec:
    """Return the policy an investigation was created with, at the prices stored on it.

    A run recorded before prices were stored on it is priced with this instance's prices.
    """
    configured = configured_policy()
    input_price, output_price = (investigation.price_input_per_million,
                                 investigation.price_output_per_million)
    return PolicySpec(
        PolicyKind(investigation.policy), dict(investigation.models_used),
        price_input_per_million=(configured.price_input_per_million if input_price is None
                                 else input_price),
        price_output_per_million=(configured.price_output_per_million if output_price is None
                                  else output_price),
    )


def engine_config(stored: dict | None = None) -> EngineConfig:
    """Rebuild the engine settings an investigation was created with (defaults otherwise)."""
    if not stored:
        return EngineConfig()
    known = {f.name for f in dataclasses.fields(EngineConfig)}
    return EngineConfig(**{k: v for k, v in stored.items() if k in known})


def build_policy(investigation: Investigation) -> Policy:
    """Return the policy that runs this investigation (replaying model replies already paid)."""
    require_usable_policy(investigation.policy)
    if investigation.policy == PolicyChoice.LLM:
        from agent.chat import configured_chat_model, resumable_chat_model
        from agent.engine.llm_policy import LLMPolicy

        return LLMPolicy(resumable_chat_model(configured_chat_model(), investigation))
    from agent.engine.offline import OfflinePolicy

    return OfflinePolicy()
