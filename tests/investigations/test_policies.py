"""One policy spec, read from settings: kind, label, model per role and cost."""

from __future__ import annotations

from agent.engine.policy_spec import PolicyKind
from agent.policies import PolicyChoice, configured_policy
from common.usage import TokenUsage


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
    assert policy.cost(TokenUsage(1_000_000, 500_000)) == 3.0


def _llm_settings(settings, input_price: float, output_price: float) -> None:
    settings.TRACE_LLM_BASE_URL = "http://127.0.0.1:9/v1"
    settings.TRACE_LLM_PRICE_INPUT_PER_M = input_price
    settings.TRACE_LLM_PRICE_OUTPUT_PER_M = output_price


def test_a_run_is_priced_with_the_prices_it_was_created_with(settings, users):
    from agent.investigations import services

    _llm_settings(settings, 1.0, 4.0)
    run = services.investigation_create(owner=users["alice"], question="Les céréales ?",
                                        enqueue=False)
    _llm_settings(settings, 100.0, 400.0)  # the instance's prices change after creation
    run.refresh_from_db()
    policy = run.policy_spec
    assert policy.kind is PolicyKind.LLM and policy.label == run.policy_label
    assert policy.cost(TokenUsage(1_000_000, 500_000)) == 3.0


def test_a_run_recorded_without_prices_is_priced_with_the_instance_prices(settings, users):
    from agent.models import Investigation

    _llm_settings(settings, 2.0, 8.0)
    run = Investigation.objects.create(owner=users["alice"], question="Les céréales ?",
                                       policy=PolicyChoice.LLM)
    assert run.price_input_per_million is None
    assert run.policy_spec.cost(TokenUsage(1_000_000, 500_000)) == 6.0
