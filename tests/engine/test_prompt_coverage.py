"""The scripted model of the tests answers every prompt file the LLM policy can send."""

from __future__ import annotations

from agent.engine import run_investigation
from agent.engine.llm_policy import LLMPolicy
from agent.engine.prompting import PROMPT_DIR
from agent.engine.sinks import ListSink
from tests.engine.conftest import Q
from tests.fakes.chat import ScriptedChatModel, covering_reply


def prompt_files() -> set[str]:
    """Every prompt the policy can render: one name per system/user pair of files."""
    names = {path.name.split(".")[0] for path in PROMPT_DIR.glob("*.j2")
             if not path.name.startswith("_")}
    for name in names:
        assert (PROMPT_DIR / f"{name}.system.j2").exists(), name
        assert (PROMPT_DIR / f"{name}.user.j2").exists(), name
    return names


def test_a_run_on_the_scripted_model_sends_every_prompt_file(retriever):
    chat = ScriptedChatModel([covering_reply] * 300)
    sink = ListSink()
    result = run_investigation(Q, policy=LLMPolicy(chat), retriever=retriever, sink=sink)
    sent = {prompt.name for prompt in chat.calls}
    files = prompt_files()
    assert files >= {"planner", "agent", "held", "briefing", "replan", "rank", "answer"}
    # The answer prompt is sent after the run, by the LLM drafter of the cited answer
    # (tests/engine/test_cited_answer.py sends it through the same scripted model).
    assert sent == files - {"answer"}, f"prompt files never exercised: {sorted(files - sent)}"
    # Every reply was usable: no stage fell back for want of a parseable answer.
    assert not sink.of("error") and not sink.of("feedback")
    assert result.ranked_document_keys
