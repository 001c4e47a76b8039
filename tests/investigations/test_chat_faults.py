"""The model client against a faulty endpoint: retried, then a readable failure, paid calls kept."""

from __future__ import annotations

import pytest
from django.utils.html import escape

from agent.engine.openai_chat import ChatModelError, OpenAIChatModel
from agent.engine.prompting import Prompt
from agent.investigations import execution, services
from agent.investigations.chat import PersistingChatModel, paid_usage, resumable_chat_model
from agent.models import Investigation, LLMCall, PromptText
from agent.review.prompt_audit import model_call_for_verdict
from common.usage import TokenUsage
from tests.fakes.stub_server import FAILURE_MODES, StubServer, opening_line

QUESTION = "Que disent Le Gaulois et L'Intransigeant du discours de M. Lejeune sur les céréales ?"

# What the final error says for each way of failing, every attempt alike.
READABLE = {
    "html": "an HTML page instead of API JSON",
    "500": "HTTP 500",
    "502": "HTTP 502",
    "429": "HTTP 429",
    "slow": "no reply within 0.5 s",
    "truncated": "truncated or invalid JSON",
    "cut": "a broken connection",
    "empty": "an empty body",
    "no_content": "a completion without choices[0].message.content",
}


@pytest.fixture
def stub():
    with StubServer(slow_seconds=1.5) as server:
        yield server


def client(stub, **kw) -> OpenAIChatModel:
    options = {"models": {"default": "stub-model"}, "timeout": 0.5, "max_retries": 2,
               "sleep": lambda s: None}
    options.update(kw)
    return OpenAIChatModel(stub.url, "key", **options)


def prompt(user: str = "Question q: q",
           system: str = opening_line("planner") + "\nYou plan.") -> Prompt:
    return Prompt(name="planner", role="planner", system=system, user=user)


def test_every_failure_mode_is_covered():
    assert set(READABLE) == set(FAILURE_MODES)


@pytest.mark.parametrize("mode", sorted(FAILURE_MODES))
def test_each_failure_is_retried_then_the_call_succeeds(stub, mode):
    stub.state.faults = [mode]
    result = client(stub).complete(prompt())
    assert "sub_questions" in result.text
    assert stub.state.served == [mode, "ok"]


@pytest.mark.parametrize("mode", sorted(FAILURE_MODES))
def test_a_failure_on_every_attempt_gives_a_readable_error(stub, mode):
    stub.state.faults = [mode] * 3
    with pytest.raises(ChatModelError) as info:
        client(stub).complete(prompt())
    error = info.value
    assert error.attempts == 3 and len(stub.state.requests) == 3
    assert READABLE[mode] in str(error), str(error)
    assert "planner prompt after 3 attempt(s)" in str(error)
    assert "AttributeError" not in str(error)


def test_retries_back_off_exponentially(stub):
    pauses: list[float] = []
    stub.state.faults = ["html", "empty", "truncated"]
    client(stub, max_retries=4, sleep=pauses.append).complete(prompt())
    assert pauses == [0.5, 1.0, 2.0]


def test_usage_billed_on_an_unusable_reply_is_counted(stub):
    # One billed reply without content, then a good one: both calls' tokens are paid for.
    clean = client(stub).complete(prompt())
    stub.state.faults = ["no_content"]
    retried = client(stub).complete(prompt())
    assert retried.usage.input_tokens == 2 * clean.usage.input_tokens
    stub.state.faults = ["no_content"] * 3
    with pytest.raises(ChatModelError) as info:
        client(stub).complete(prompt())
    assert info.value.usage.input_tokens == 3 * clean.usage.input_tokens
    assert info.value.usage.output_tokens > 0


def test_a_fifth_of_calls_failing_at_random_still_completes_every_call():
    with StubServer(fail_rate=0.2, seed=7, slow_seconds=1.0,
                    fail_modes=("html", "500", "slow", "truncated", "empty")) as stub:
        chat = client(stub, max_retries=4)
        for i in range(40):
            assert "sub_questions" in chat.complete(prompt(user=f"Question q: q{i}")).text
        failures = [s for s in stub.state.served if s != "ok"]
    assert len(stub.state.served) == 40 + len(failures)
    assert 4 <= len(failures) <= 20, failures  # about a fifth of the requests, seeded
    assert set(failures) <= {"html", "500", "slow", "truncated", "empty"}


def test_a_client_is_never_built_without_an_endpoint():
    with pytest.raises(ChatModelError, match="no model endpoint configured"):
        OpenAIChatModel("", "key", models={"default": "m"})
    with pytest.raises(ChatModelError, match="no model endpoint configured"):
        OpenAIChatModel("   ", "key", models={"default": "m"})


@pytest.fixture
def investigation(users):
    return Investigation.objects.create(owner=users["alice"], question=QUESTION, policy="llm")


def test_prompts_are_stored_once_per_distinct_text(stub, investigation):
    chat = PersistingChatModel(client(stub), investigation, next_ordinal=0)
    before = PromptText.objects.count()
    for user in ["Question q: a", "Question q: b", "Question q: a"]:
        chat.complete(prompt(user=user, system="You plan the same way every time."))
    calls = list(investigation.llm_call_records.select_related("system_prompt", "user_prompt"))
    assert [c.user_prompt.text for c in calls] == ["Question q: a", "Question q: b",
                                                   "Question q: a"]
    assert {c.system_prompt_id for c in calls} == {calls[0].system_prompt_id}
    assert calls[0].user_prompt_id == calls[2].user_prompt_id
    assert PromptText.objects.count() - before == 3  # one system text, two user texts


def test_a_failed_call_is_stored_with_its_prompts_and_billed_tokens(stub, investigation):
    chat = PersistingChatModel(client(stub), investigation, next_ordinal=0)
    chat.complete(prompt())
    stub.state.faults = ["no_content"] * 3
    with pytest.raises(ChatModelError):
        chat.complete(prompt(user="Question q: second"))
    failed = investigation.llm_call_records.get(ordinal=1)
    assert not failed.succeeded and failed.usage.input_tokens > 0
    assert "no usable reply" in failed.response
    assert failed.user_prompt.text == "Question q: second"
    # A resumed run replays only the good reply and numbers its calls after the failed one.
    resumed = resumable_chat_model(client(stub), investigation)
    resumed.complete(prompt())
    assert resumed.replayed == 1
    resumed.complete(prompt(user="Question q: second"))
    assert list(investigation.llm_call_records.values_list("ordinal", "succeeded")) == [
        (0, True), (1, False), (2, True)]


def test_a_failed_run_keeps_the_tokens_and_cost_of_its_paid_calls(
        stub, users, tiny_archive, settings):
    settings.TRACE_LLM_BASE_URL = stub.url
    settings.TRACE_LLM_MODEL = settings.TRACE_LLM_PLANNER_MODEL = "stub-model"
    settings.TRACE_LLM_AGENT_MODEL = settings.TRACE_LLM_RERANKER_MODEL = "stub-model"
    settings.TRACE_LLM_MAX_RETRIES = 1
    settings.TRACE_LLM_TIMEOUT = 2.0
    settings.TRACE_LLM_PRICE_INPUT_PER_M = 1.0
    settings.TRACE_LLM_PRICE_OUTPUT_PER_M = 4.0
    run = services.investigation_create(owner=users["alice"], question=QUESTION, enqueue=False)
    assert run.policy == "llm"
    stub.state.faults = [None, None, None] + ["html"] * 200  # three good replies, then HTML
    with pytest.raises(ChatModelError):
        execution.investigation_execute(investigation_id=run.pk, retriever=tiny_archive)
    run.refresh_from_db()
    calls = list(run.llm_call_records.all())
    paid = [c for c in calls if c.succeeded]
    assert run.status == Investigation.Status.FAILED
    assert run.error.startswith("The model endpoint gave no usable reply")
    assert "an HTML page instead of API JSON" in run.error
    assert len(paid) == 3 and len(calls) == 4
    assert run.usage == TokenUsage.total(c.usage for c in paid)
    assert run.usage.input_tokens > 0 and run.usage.output_tokens > 0
    assert run.cost == pytest.approx(
        (run.usage.input_tokens * 1.0 + run.usage.output_tokens * 4.0) / 1e6)
    assert run.cost > 0
    assert paid_usage(run.pk).cost == run.cost


def test_an_llm_run_is_refused_cleanly_on_an_instance_without_an_endpoint(
        stub, users, tiny_archive, settings):
    settings.TRACE_LLM_BASE_URL = stub.url
    run = services.investigation_create(owner=users["alice"], question=QUESTION, enqueue=False)
    Investigation.objects.filter(pk=run.pk).update(status=Investigation.Status.FAILED)
    run.refresh_from_db()
    settings.TRACE_LLM_BASE_URL = ""
    with pytest.raises(services.InvestigationError, match="TRACE_LLM_BASE_URL"):
        services.investigation_resume(investigation=run)
    run.refresh_from_db()
    assert run.status == Investigation.Status.FAILED
    # A worker that gets the run anyway fails it with the same message, and sends nothing.
    Investigation.objects.filter(pk=run.pk).update(status=Investigation.Status.QUEUED)
    requests_before = len(stub.state.requests)
    with pytest.raises(Exception, match="TRACE_LLM_BASE_URL"):
        execution.investigation_execute(investigation_id=run.pk, retriever=tiny_archive)
    run.refresh_from_db()
    assert run.status == Investigation.Status.FAILED
    assert "needs a model endpoint (TRACE_LLM_BASE_URL)" in run.error
    assert not run.error.startswith("ImproperlyConfigured")
    assert len(stub.state.requests) == requests_before
    assert not LLMCall.objects.filter(investigation=run).exists()


def test_the_evidence_path_shows_the_exact_prompts_on_demand(
        stub, users, tiny_archive, settings, client):
    settings.TRACE_LLM_BASE_URL = stub.url
    settings.TRACE_LLM_PLANNER_MODEL = settings.TRACE_LLM_AGENT_MODEL = "stub-model"
    settings.TRACE_LLM_RERANKER_MODEL = "stub-model"
    run = services.investigation_create(owner=users["alice"], question=QUESTION, enqueue=False)
    execution.investigation_execute(investigation_id=run.pk, retriever=tiny_archive)
    run.refresh_from_db()
    assert run.status == Investigation.Status.FINISHED and run.ranked_keys
    verdict = run.verdicts.filter(source="agent", decision="accept").first()
    call = LLMCall.objects.filter(investigation=run, role="agent", succeeded=True).first()
    assert verdict is not None and call is not None
    client.force_login(users["alice"])
    page = client.get(f"/investigations/{run.pk}/evidence/?doc={verdict.document_key}"
                      ).content.decode()
    assert '<details class="prompt' in page and "Exact prompts sent to stub-model" in page
    decided_by = model_call_for_verdict(verdict)
    assert decided_by is not None and decided_by.role == "agent"
    assert str(verdict.chunk_id) in decided_by.user_prompt.text  # the prompt showed that chunk
    assert escape(decided_by.user_prompt.text) in page
    assert escape(decided_by.system_prompt.text) in page
