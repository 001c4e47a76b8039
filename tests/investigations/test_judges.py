"""Which judge offline runs use: the learnt model, else the rules, said where a user looks."""

from __future__ import annotations

import pytest

from agent.checks import learnt_judge_loads
from agent.engine.offline import OfflinePolicy
from agent.investigations import judges


@pytest.fixture
def fresh_judge():
    judges.judge_in_use.cache_clear()
    yield
    judges.judge_in_use.cache_clear()


def test_the_shipped_model_is_the_offline_default(fresh_judge):
    in_use = judges.judge_in_use()
    assert in_use.kind == judges.LEARNT and in_use.model is not None
    policy = judges.offline_policy()
    assert isinstance(policy, OfflinePolicy) and policy.judge_model is in_use.model
    assert judges.offline_policy(judge=judges.RULES).judge_model is None
    assert learnt_judge_loads() == []


def test_a_missing_model_leaves_the_rule_judge_in_use_and_says_so(settings, tmp_path, client,
                                                                  django_user_model,
                                                                  fresh_judge):
    settings.TRACE_JUDGE_MODEL_DIR = tmp_path
    in_use = judges.judge_in_use()
    assert in_use.kind == judges.RULES and str(tmp_path) in in_use.problem
    assert judges.offline_policy().judge_model is None
    warning = learnt_judge_loads()
    assert warning and str(tmp_path) in warning[0].msg
    # The Ask page says which judge runs, and why.
    django_user_model.objects.create_user("ada", password="pw-ada-12345")
    client.login(username="ada", password="pw-ada-12345")
    page = client.get("/investigations/new/").content.decode()
    assert "rule judge (learnt judge unavailable" in page


def test_health_names_the_judge(fresh_judge, settings, tmp_path):
    from trace_site.health import check_judge

    assert check_judge().startswith("ok: learnt judge")
    settings.TRACE_JUDGE = "rules"
    judges.judge_in_use.cache_clear()
    assert check_judge() == "ok: rule judge"
