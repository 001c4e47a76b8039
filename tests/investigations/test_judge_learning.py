"""The judge learns from the historian: their decisions counted, switched off, reset."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from agent.investigations import judge_learning
from agent.models import Investigation, Verdict

pytestmark = pytest.mark.django_db


def _run(owner, probabilities: dict[str, float]) -> Investigation:
    investigation = Investigation.objects.create(owner=owner, question="Que dit la presse ?")
    for key, p in probabilities.items():
        Verdict.objects.create(investigation=investigation, document_key=key, decision="hold",
                               source=Verdict.Origin.AGENT, probability=p)
    return investigation


def _decide(investigation, user, key: str, decision: str) -> Verdict:
    return Verdict.objects.create(investigation=investigation, document_key=key,
                                  decision=decision, source=Verdict.Origin.HUMAN, user=user)


def test_every_decision_of_the_owner_is_an_example_with_the_judges_probability(settings):
    settings.TRACE_JUDGE_MIN_OVERRIDES = 3
    user = get_user_model().objects.create_user("ada", password="pw-ada-123")
    run = _run(user, {"a:1": 0.4, "a:2": 0.3, "a:3": 0.2})
    for key in ("a:1", "a:2"):
        _decide(run, user, key, "reject")
    _decide(run, user, "a:3", "accept")
    _decide(run, user, "a:3", "reject")  # the latest decision on a source is the one learnt
    assert sorted(judge_learning.examples(user)) == [(0.2, 0.0), (0.3, 0.0), (0.4, 0.0)]
    learning = judge_learning.learning_of(user)
    assert learning.decisions == 3 and learning.shift is not None and learning.shift < 0


def test_below_the_minimum_or_switched_off_nothing_is_adapted(settings):
    settings.TRACE_JUDGE_MIN_OVERRIDES = 3
    user = get_user_model().objects.create_user("ada", password="pw-ada-123")
    run = _run(user, {"a:1": 0.4, "a:2": 0.3, "a:3": 0.2})
    _decide(run, user, "a:1", "reject")
    assert judge_learning.learning_of(user).shift is None
    assert judge_learning.learning_of(user).needed == 2
    _decide(run, user, "a:2", "reject")
    _decide(run, user, "a:3", "hold")
    assert judge_learning.learning_of(user).shift is not None
    judge_learning.learning_switch(user=user, enabled=False)
    assert judge_learning.learning_of(user).shift is None
    assert judge_learning.learning_of(user).decisions == 3


def test_a_reset_counts_afresh_and_loses_no_decision(settings):
    user = get_user_model().objects.create_user("ada", password="pw-ada-123")
    run = _run(user, {"a:1": 0.4})
    _decide(run, user, "a:1", "reject")
    judge_learning.learning_reset(user=user)
    assert judge_learning.learning_of(user).decisions == 0
    assert Verdict.objects.filter(source=Verdict.Origin.HUMAN).count() == 1


def test_one_historians_decisions_never_shape_anothers_runs(settings):
    ada = get_user_model().objects.create_user("ada", password="pw-ada-123")
    bob = get_user_model().objects.create_user("bob", password="pw-bob-123")
    run = _run(ada, {"a:1": 0.4})
    _decide(run, ada, "a:1", "reject")
    # A decision by someone who does not own the run (through a shared link) never counts.
    _decide(run, bob, "a:1", "accept")
    assert judge_learning.learning_of(bob).decisions == 0
    assert judge_learning.learning_of(ada).decisions == 1
    settings.TRACE_JUDGE_POOL_OVERRIDES = True
    assert judge_learning.learning_of(bob).decisions == 1
