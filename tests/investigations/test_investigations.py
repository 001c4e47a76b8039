"""Investigations persist every engine event, resume without paying twice, and stay private."""

from __future__ import annotations

import pytest

from agent.engine.llm_policy import LLMPolicy
from agent.engine.offline import OfflinePolicy
from agent.investigations import execution, services
from agent.models import Investigation, LLMCall, Step, Verdict
from agent.review import services as review_services
from agent.sources import reviewed_sources
from tests.fakes.chat import ScriptedChatModel
from tests.fakes.stub_server import plausible_reply

QUESTION = ("Comment Le Gaulois et L'Intransigeant jugent-ils le discours de M. Lejeune "
            "sur les céréales ?")


def _create(owner, question=QUESTION, **kwargs) -> Investigation:
    return services.investigation_create(owner=owner, question=question, enqueue=False, **kwargs)


def test_a_run_persists_contiguous_steps_and_projects_verdicts(users, tiny_archive):
    investigation = _create(users["alice"])
    execution.investigation_execute(investigation_id=investigation.pk, retriever=tiny_archive,
                                   policy=OfflinePolicy())
    investigation.refresh_from_db()
    assert investigation.status == Investigation.Status.FINISHED
    seqs = list(investigation.steps.values_list("seq", flat=True))
    assert seqs == list(range(1, len(seqs) + 1))
    kinds = set(investigation.steps.values_list("kind", flat=True))
    assert {"plan", "subquestion_start", "warm_start", "verdict", "briefing", "rank"} <= kinds
    verdict_steps = investigation.steps.filter(kind="verdict").count()
    assert investigation.verdicts.filter(source__in=["agent", "auto", "held_reeval"]).count() \
        == verdict_steps
    assert investigation.sub_questions.count() >= 1
    assert investigation.ranked_keys, "the offline policy accepts the matching articles"
    assert set(investigation.ranked_keys) <= {c.document_key for c in tiny_archive.chunks}


class Killed(BaseException):
    """Stands for a worker killed mid-run (not an Exception, so nothing catches it)."""


def test_a_resumed_run_replays_paid_calls_and_skips_persisted_steps(users, tiny_archive, settings):
    # The uninterrupted reference run.
    reference = _create(users["alice"])
    reference_model = ScriptedChatModel([plausible_reply] * 200)
    execution.investigation_execute(
        investigation_id=reference.pk, retriever=tiny_archive,
        policy=LLMPolicy(_resumable(reference_model, reference)))
    reference_kinds = list(reference.steps.values_list("kind", "payload"))

    # The same run, killed after four paid calls.
    investigation = _create(users["alice"])
    calls = {"n": 0}

    def dying(prompt):
        calls["n"] += 1
        if calls["n"] > 4:
            raise Killed()
        return plausible_reply(prompt)

    with pytest.raises(Killed):
        execution.investigation_execute(
            investigation_id=investigation.pk, retriever=tiny_archive,
            policy=LLMPolicy(_resumable(ScriptedChatModel([dying] * 200), investigation)))
    assert LLMCall.objects.filter(investigation=investigation).count() == 4
    persisted_before = investigation.steps.count()

    Investigation.objects.filter(pk=investigation.pk).update(
        status=Investigation.Status.INTERRUPTED)
    fresh = ScriptedChatModel([plausible_reply] * 200)
    execution.investigation_execute(
        investigation_id=investigation.pk, retriever=tiny_archive,
        policy=LLMPolicy(_resumable(fresh, investigation)))
    investigation.refresh_from_db()
    assert investigation.status == Investigation.Status.FINISHED
    assert len(fresh.calls) == len(reference_model.calls) - 4, "paid calls are not repeated"
    assert investigation.steps.count() > persisted_before
    resumed = [(kind, _without_timing(payload))
               for kind, payload in investigation.steps.values_list("kind", "payload")]
    assert resumed == [(kind, _without_timing(payload)) for kind, payload in reference_kinds]
    reference.refresh_from_db()
    assert investigation.ranked_keys == reference.ranked_keys


def _without_timing(payload):
    return {k: v for k, v in payload.items() if not k.endswith("seconds")}


def _resumable(inner, investigation):
    from agent.investigations.chat import resumable_chat_model

    return resumable_chat_model(inner, investigation)


def test_an_override_is_a_new_verdict_and_reorders_the_review(users, tiny_archive):
    investigation = _create(users["alice"])
    execution.investigation_execute(investigation_id=investigation.pk, retriever=tiny_archive,
                                   policy=OfflinePolicy())
    investigation.refresh_from_db()
    accepted = investigation.ranked_keys[0]
    agent_verdicts = investigation.verdicts.count()
    review_services.verdict_override(investigation=investigation, user=users["alice"],
                              document_key=accepted, decision="reject", note="hors sujet")
    assert investigation.verdicts.count() == agent_verdicts + 1
    assert investigation.verdicts.filter(source="agent", document_key=accepted).exists()
    sources = {s.document_key: s for s in reviewed_sources(investigation)}
    assert sources[accepted].state == "rejected"
    assert sources[accepted].rank is None
    assert sources[accepted].human_user == "alice"


def test_overriding_a_document_without_a_verdict_is_refused(users, tiny_archive):
    investigation = _create(users["alice"])
    with pytest.raises(services.InvestigationError):
        review_services.verdict_override(investigation=investigation, user=users["alice"],
                                  document_key="nope:1", decision="accept")


def test_an_empty_question_or_reversed_dates_are_refused(users):
    import datetime as dt

    with pytest.raises(services.InvestigationError):
        _create(users["alice"], question="   ")
    with pytest.raises(services.InvestigationError):
        _create(users["alice"], date_from=dt.date(1887, 5, 1), date_to=dt.date(1887, 1, 1))


def test_cancel_of_a_queued_run_is_immediate_and_resume_requeues(
        users, django_capture_on_commit_callbacks):
    investigation = _create(users["alice"])
    services.investigation_cancel(investigation=investigation)
    assert investigation.status == Investigation.Status.CANCELLED
    with django_capture_on_commit_callbacks() as callbacks:
        services.investigation_resume(investigation=investigation)
    assert investigation.status == Investigation.Status.QUEUED
    assert len(callbacks) == 1


def test_runs_without_heartbeat_are_marked_interrupted(users):
    import datetime as dt

    from django.utils import timezone

    investigation = _create(users["alice"])
    Investigation.objects.filter(pk=investigation.pk).update(
        status=Investigation.Status.RUNNING,
        heartbeat_at=timezone.now() - dt.timedelta(minutes=10))
    assert services.investigations_mark_interrupted() == 1
    investigation.refresh_from_db()
    assert investigation.can_resume


def test_steps_are_append_only_even_for_overrides(users, tiny_archive):
    investigation = _create(users["alice"])
    execution.investigation_execute(investigation_id=investigation.pk, retriever=tiny_archive,
                                   policy=OfflinePolicy())
    before = list(Step.objects.filter(investigation=investigation).values_list("seq", "payload"))
    key = investigation.verdicts.first().document_key
    review_services.verdict_override(investigation=investigation, user=users["alice"],
                                     document_key=key,
                              decision="hold")
    after = list(Step.objects.filter(investigation=investigation).values_list("seq", "payload"))
    assert before == after
    assert Verdict.objects.filter(investigation=investigation, source="human").count() == 1
