"""Exercise the OpenAI adapter through the real client against a local stub server."""

from __future__ import annotations

import pytest

from agent.engine.openai_chat import ChatModelError, OpenAIChatModel
from agent.engine.stub_server import StubServer, plausible_reply


@pytest.fixture
def stub():
    with StubServer() as server:
        yield server


def model(stub, **kw):
    defaults = {"models": {"default": "stub-model"}, "timeout": 2.0, "max_retries": 2,
                "price_input_per_million": 1.0, "price_output_per_million": 2.0,
                "sleep": lambda s: None}
    defaults.update(kw)
    return OpenAIChatModel(stub.url, "key", **defaults)


def test_success_sends_json_mode_and_records_usage(stub):
    stub.state.cached_tokens = 3
    chat = model(stub)
    result = chat.complete(role="agent", system="You are a source-discovery agent",
                           user="No pending batch")
    assert '"finish"' in result.text
    request = stub.state.requests[0]
    assert request["response_format"] == {"type": "json_object"}
    assert request["temperature"] == 0 and request["model"] == "stub-model"
    assert result.input_tokens > 0 and result.cached_tokens == 3
    assert chat.usage.calls == 1 and chat.usage.cost > 0


def test_rate_limit_is_retried_then_succeeds(stub):
    stub.state.faults = [429]
    chat = model(stub)
    chat.complete(role="planner", system="x", user="y")
    assert len(stub.state.requests) == 2 and chat.usage.retries == 1


def test_repeated_server_errors_give_up_with_a_typed_error(stub):
    stub.state.faults = [500, 500, 500, 500]
    with pytest.raises(ChatModelError) as info:
        model(stub).complete(role="planner", system="x", user="y")
    assert info.value.attempts == 3 and info.value.retryable
    assert len(stub.state.requests) == 3


def test_timeouts_are_retried(stub):
    stub.state.faults = [("sleep", 1.5)]
    chat = model(stub, timeout=0.5)
    result = chat.complete(role="planner", system="x", user="y")
    assert result.text and chat.usage.retries == 1


def test_stub_answers_every_role_with_plausible_json():
    from agent.engine.parsing import parse_json_object

    assert "sub_questions" in parse_json_object(plausible_reply(
        "planner", "You plan source discovery", "slug=a\nQuestion q: q"))
    review = parse_json_object(plausible_reply(
        "agent", "You are a source-discovery agent", '<document chunk_id="4" x>t</document>'))
    assert review["args"]["verdicts"][0] == {"chunk_id": 4, "verdict": "accept",
                                             "rationale": "first chunk of the batch"}
