"""One policy spec, read from settings: kind, label, model per role and cost."""

from __future__ import annotations

from agent.engine.policy_spec import PolicyKind
from agent.policies import PolicyChoice, configured_policy


def test_without_an_endpoint_the_offline_policy_runs_and_costs_nothing(settings):
    settings.TRACE_LLM_BASE_URL = ""
    policy = configured_policy()
    assert policy.kind is PolicyKind.OFFLINE and policy.models == {}
    assert policy.label == PolicyChoice.OFFLINE.label == "offline policy (no LLM)"


def test_an_endpoint_gives_the_llm_policy_its_models_and_prices(settings):
    settings.TRACE_LLM_BASE_URL = "http://127.0.0.1:9/v1"
    settings.TRACE_LLM_PLANNER_MODEL = "big"
    settings.TRACE_LLM_AGENT_MODEL = "mid"
    settings.TRACE_LLM_RERANKER_MODEL = "small"
    settings.TRACE_LLM_PRICE_INPUT_PER_M = 1.0
    settings.TRACE_LLM_PRICE_OUTPUT_PER_M = 4.0
    policy = configured_policy()
    assert policy.kind == PolicyChoice.LLM
    assert policy.models == {"planner": "big", "agent": "mid", "reranker": "small"}
    assert policy.label == "LLM: mid"
    assert policy.cost(1_000_000, 500_000) == 3.0
