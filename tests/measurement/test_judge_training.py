"""The judge's training: folds by connected gold groups, thresholds from out-of-fold scores."""

from __future__ import annotations

from measurement.evaluation.records import EvalQuestion
from measurement.judge_training import Row, auc, choose_thresholds, gold_group_folds


def _question(qid: str, *gold: str) -> EvalQuestion:
    return EvalQuestion(qid=qid, question="?", question_type="t", gold_keys=gold)


def test_questions_sharing_a_gold_document_share_a_fold_even_through_a_chain():
    questions = [_question("a", "d:1"), _question("b", "d:1", "d:2"), _question("c", "d:2"),
                 *(_question(f"q{i}", f"e:{i}") for i in range(8))]
    folds = gold_group_folds(questions, folds=5)
    assert folds["a"] == folds["b"] == folds["c"]
    assert set(folds.values()) == set(range(5))


def test_the_accept_threshold_keeps_the_median_sources_within_its_bound():
    rows, scores = [], []
    for q in range(20):
        for d in range(10):
            rows.append(Row(f"q{q}", f"d:{q}:{d}", (0.0,), d == 0))
            scores.append(0.9 if d == 0 else 0.05 * d)
    gold_of = {f"q{q}": {f"d:{q}:0"} for q in range(20)}
    thresholds, figures = choose_thresholds(rows, scores, gold_of, median_accepted=3)
    assert figures["median_accepted"] <= 3 and figures["recall"] == 1.0
    assert thresholds.screen <= thresholds.hold <= thresholds.accept


def test_auc_is_the_rank_statistic():
    assert auc([True, False, True, False], [0.9, 0.1, 0.8, 0.2]) == 1.0
    assert auc([True, False], [0.1, 0.9]) == 0.0
