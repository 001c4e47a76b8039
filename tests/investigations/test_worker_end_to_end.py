"""A real Celery worker on real Redis runs investigations against Postgres and the stub LLM."""

from __future__ import annotations

import time

import pytest

from agent.investigations import services
from agent.models import Investigation, LLMCall
from archive.models import CorpusRevision

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]

QUESTION = "Que disent Le Gaulois et L'Intransigeant du discours de M. Lejeune sur les céréales ?"


def _wait_until_done(investigation: Investigation, timeout: float = 90) -> Investigation:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        investigation.refresh_from_db()
        if not investigation.is_active:
            return investigation
        time.sleep(0.3)
    raise AssertionError(f"still {investigation.status} after {timeout} s")


@pytest.fixture
def indexed_archive(tiny_archive):
    # Each test's archive is new, so it gets a revision of its own (the BM25 cache is per revision).
    CorpusRevision.objects.update_or_create(pk=1, defaults={"revision": time.time_ns()})
    return tiny_archive


def test_a_worker_runs_an_llm_investigation_through_the_openai_client(
        users, indexed_archive, celery_worker_process, stub_llm):
    investigation = Investigation.objects.create(
        owner=users["alice"], question=QUESTION, policy="llm", policy_label="LLM: stub-model")
    services.investigation_enqueue(investigation=investigation)  # on_commit: autocommit here
    investigation = _wait_until_done(investigation)
    assert investigation.status == Investigation.Status.FINISHED, investigation.error
    kinds = list(investigation.steps.values_list("kind", flat=True))
    assert kinds[0] == "start" and kinds[-1] == "finish"
    assert "llm_call" in kinds and "verdict" in kinds
    assert investigation.llm_calls == LLMCall.objects.filter(investigation=investigation).count()
    assert investigation.llm_calls == kinds.count("llm_call") > 0
    assert investigation.input_tokens > 0
    assert investigation.ranked_keys, "the stub accepts the first chunk of each batch"
    assert stub_llm.state.requests, "the worker talked to the stub endpoint"


def test_several_investigations_run_concurrently_with_the_offline_policy(
        users, indexed_archive, celery_worker_process):
    runs = [
        services.investigation_create(owner=users["alice"], question=QUESTION)
        for _ in range(3)
    ]
    finished = [_wait_until_done(run) for run in runs]
    assert all(run.status == Investigation.Status.FINISHED for run in finished)
    assert all(run.policy_label == "offline policy (no LLM)" for run in finished)
    rankings = {tuple(run.ranked_keys) for run in finished}
    assert len(rankings) == 1, "the offline policy is deterministic"


def test_a_run_whose_worker_is_killed_resumes_without_repeating_paid_calls(
        users, indexed_archive, stub_llm, celery_worker_process, settings):
    from agent.investigations.tasks import execute_investigation
    from tests.conftest import start_worker, stop_worker

    # The web side and the worker share their configuration in every deployment.
    settings.TRACE_LLM_BASE_URL = stub_llm.url
    queue = f"kill-test-{time.time_ns()}"
    stub_llm.state.faults = [("sleep", 0.7)] * 40  # every model call takes a while
    investigation = Investigation.objects.create(
        owner=users["alice"], question=QUESTION, policy="llm", policy_label="LLM: stub-model")
    worker = start_worker(queue, llm_url=stub_llm.url, name="doomed")
    try:
        execute_investigation.apply_async(args=[investigation.pk], queue=queue)
        deadline = time.monotonic() + 60
        while LLMCall.objects.filter(investigation=investigation).count() < 3:
            assert time.monotonic() < deadline, "the run never got going"
            time.sleep(0.1)
    finally:
        stop_worker(worker, kill=True)  # SIGKILL mid-run: no cleanup code runs
    paid_before = LLMCall.objects.filter(investigation=investigation).count()
    steps_before = investigation.steps.count()
    investigation.refresh_from_db()
    assert investigation.status == Investigation.Status.RUNNING

    assert services.investigations_mark_interrupted(stale_after_seconds=0) >= 1
    investigation.refresh_from_db()
    assert investigation.can_resume
    stub_llm.state.faults = []
    requests_before = len(stub_llm.state.requests)
    services.investigation_resume(investigation=investigation)  # autocommit: queued at once
    investigation = _wait_until_done(investigation)

    assert investigation.status == Investigation.Status.FINISHED, investigation.error
    new_requests = len(stub_llm.state.requests) - requests_before
    assert new_requests == investigation.llm_calls - paid_before, "paid calls were repeated"
    assert investigation.llm_calls == LLMCall.objects.filter(investigation=investigation).count()
    seqs = list(investigation.steps.values_list("seq", flat=True))
    assert seqs == list(range(1, len(seqs) + 1)) and len(seqs) > steps_before
    assert investigation.attempts == 2
