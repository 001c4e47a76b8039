"""Exercise the OpenAI adapter through the real client against a local stub server."""

from __future__ import annotations

import pytest

from agent.engine.openai_chat import ChatModelError, OpenAIChatModel
from agent.engine.prompting import PROMPT_DIR, Prompt
from tests.fakes.stub_server import StubServer, opening_line, plausible_reply, prompt_name


@pytest.fixture
def stub():
    with StubServer() as server:
        yield server


def model(stub, **kw):
    defaults = {"models": {"default": "stub-model"}, "timeout": 2.0, "max_retries": 2,
                "sleep": lambda s: None}
    defaults.update(kw)
    return OpenAIChatModel(stub.url, "key", **defaults)


def system_prompt(name: str) -> str:
    """Return a system prompt that opens like the prompt file's own."""
    return opening_line(name) + "\nx"


def prompt(name: str = "planner", user: str = "y", role: str = "planner") -> Prompt:
    return Prompt(name=name, role=role, system=system_prompt(name), user=user)


def test_success_sends_json_mode_and_records_usage(stub):
    stub.state.cached_tokens = 3
    result = model(stub).complete(prompt("agent", "No pending batch", role="agent"))
    assert '"finish"' in result.text
    request = stub.state.requests[0]
    assert request["response_format"] == {"type": "json_object"}
    assert request["temperature"] == 0 and request["model"] == "stub-model"
    assert result.usage.input_tokens > 0 and result.usage.output_tokens > 0
    assert result.usage.cached_tokens == 3
    assert len(stub.state.requests) == 1


def test_the_stub_tells_prompts_apart_by_their_system_prompt(stub):
    # The same user wording under two prompts gets the reply of each: the system prompt decides.
    chat = model(stub)
    assert "sub_questions" in chat.complete(prompt("planner", "Question q: q")).text
    assert '"remaining": null' in chat.complete(prompt("replan", "Question q: q")).text


def test_rate_limit_is_retried_then_succeeds(stub):
    stub.state.faults = [429]
    model(stub).complete(prompt())
    assert len(stub.state.requests) == 2


def test_repeated_server_errors_give_up_with_a_typed_error(stub):
    stub.state.faults = [500, 500, 500, 500]
    with pytest.raises(ChatModelError) as info:
        model(stub).complete(prompt())
    assert info.value.attempts == 3 and info.value.retryable
    assert len(stub.state.requests) == 3


def test_timeouts_are_retried(stub):
    stub.state.faults = [("sleep", 1.5)]
    result = model(stub, timeout=0.5).complete(prompt())
    assert result.text and len(stub.state.requests) == 2


def test_stub_answers_every_prompt_with_plausible_json():
    from agent.engine.parsing import parse_json_object

    assert "sub_questions" in parse_json_object(plausible_reply(
        prompt("planner", "slug=a\nQuestion q: q")))
    review = parse_json_object(plausible_reply(
        prompt("agent", '<document chunk_id="4" x>t</document>', role="agent")))
    assert review["args"]["verdicts"][0] == {"chunk_id": 4, "verdict": "accept",
                                             "rationale": "first chunk of the batch"}


def test_the_client_sends_no_header_meant_for_a_test(stub):
    model(stub).complete(prompt("agent", "No pending batch", role="agent"))
    assert not [name for name in stub.state.headers[0] if name.lower().startswith("x-trace")]


def test_the_stub_knows_every_prompt_file_by_its_system_prompt():
    names = sorted(p.name.removesuffix(".system.j2") for p in PROMPT_DIR.glob("*.system.j2"))
    assert names == ["agent", "answer", "briefing", "held", "planner", "rank", "replan"]
    assert [prompt_name(system_prompt(name)) for name in names] == names
    assert prompt_name("Some other system prompt") == ""
