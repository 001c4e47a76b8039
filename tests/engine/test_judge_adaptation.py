"""Check the shift that adapts the learnt judge to one historian's decisions."""

from __future__ import annotations

import pytest

from agent.engine.judge_adaptation import log_odds_shift
from agent.engine.judge_model import Thresholds


def test_no_decision_no_shift():
    assert log_odds_shift([]) == 0.0


def test_a_historian_who_rejects_what_the_judge_likes_raises_the_bar():
    rejected = [(0.4, 0.0)] * 20
    shift = log_odds_shift(rejected)
    assert shift < -1.0
    thresholds = Thresholds(accept=0.3, hold=0.1, screen=0.01)
    # The judge's probabilities are lowered by the shift: the same chunk needs more to pass.
    assert thresholds.shifted(-shift).accept > thresholds.accept


def test_a_few_decisions_move_the_judge_less_than_many():
    few = log_odds_shift([(0.1, 1.0)] * 3)
    many = log_odds_shift([(0.1, 1.0)] * 60)
    assert 0 < few < many


def test_decisions_agreeing_with_the_judge_leave_it_nearly_as_it_is():
    agreeing = [(0.9, 1.0), (0.1, 0.0)] * 10
    assert log_odds_shift(agreeing) == pytest.approx(0.0, abs=0.05)
