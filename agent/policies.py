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


def available_policies() -> list[PolicyChoice]:
    """Return the policies this instance can run: the offline one, and the LLM with an endpoint."""
    return [PolicyChoice.OFFLINE, *([PolicyChoice.LLM] if endpoint_configured() else [])]


def available_models() -> list[str]:
    """Return the model names a run may choose: the role models, then TRACE_LLM_MODELS."""
    names = [*role_models().values(), *settings.TRACE_LLM_MODELS]
    return list(dict.fromkeys(name for name in names if name))


def chosen_policy(policy: str, agent_model: str = "") -> PolicySpec:
    """Return the spec of a policy chosen by the historian, at this instance's prices.

    The chosen model replaces the agent role's (the one whose replies give the verdicts); the
    planner and reranker keep the configured models. Refuses what this instance cannot run.
    """
    require_usable_policy(policy)
    configured = configured_policy()
    prices = {"price_input_per_million": configured.price_input_per_million,
              "price_output_per_million": configured.price_output_per_million}
    if policy != PolicyChoice.LLM:
        return PolicySpec(PolicyKind.OFFLINE, {}, **prices)
    if agent_model and agent_model not in available_models():
        raise ImproperlyConfigured(f"The model {agent_model!r} is not offered on this instance.")
    return PolicySpec(PolicyKind.LLM, {**role_models(), "agent": agent_model or
                                       settings.TRACE_LLM_AGENT_MODEL}, **prices)


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


@dataclasses.dataclass(frozen=True)
class AdjustableSetting:
    """An engine setting a historian may change when running an investigation again."""

    name: str  # an EngineConfig field
    label: str
    minimum: int
    maximum: int


ADJUSTABLE_SETTINGS = (
    AdjustableSetting("m_max", "Sub-questions at most", 1, 10),
    AdjustableSetting("step_budget", "Steps per sub-question", 1, 50),
    AdjustableSetting("search_limit", "Passages per search", 1, 50),
    AdjustableSetting("warm_start_limit", "Passages in the warm start", 1, 50),
    AdjustableSetting("held_pool_size", "Held passages kept", 1, 50),
)


def adjusted_config(base: dict | None, changes: dict[str, int]) -> EngineConfig:
    """Return the settings `base` was stored with, the adjustable ones changed within bounds."""
    bounds = {setting.name: setting for setting in ADJUSTABLE_SETTINGS}
    for name, value in changes.items():
        setting = bounds.get(name)
        if setting is None:
            raise ValueError(f"The setting {name!r} cannot be changed.")
        if not setting.minimum <= value <= setting.maximum:
            raise ValueError(f"{setting.label}: between {setting.minimum} and "
                             f"{setting.maximum}.")
    return dataclasses.replace(engine_config(base), **changes)
