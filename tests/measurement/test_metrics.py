"""Evaluation metrics on hand-computed examples (no database)."""

import json

import pytest

from common.ranking_metrics import all_gold_in_top, multi_gold_mrr, recall_at_k
from common.usage import TokenUsage
from measurement.evaluation.metrics import (
    acceptance,
    jaccard,
    miss_causes,
    percentile,
    recall_by_group,
    single_channel_gold,
    summarize,
)
from measurement.evaluation.records import AgentFigures, FalseClaim, GroupRecall, ResultRow

RANKED = ["a", "x", "b", "y", "z"]


def test_recall_at_k_is_share_of_gold_in_top_k():
    assert recall_at_k(RANKED, ["a", "b"], 2) == 0.5
    assert recall_at_k(RANKED, ["a", "b"], 3) == 1.0
    assert recall_at_k(RANKED, ["q"], 5) == 0.0


def test_multi_gold_mrr_averages_reciprocal_ranks_with_zero_for_absent():
    assert multi_gold_mrr(RANKED, ["a", "b"]) == pytest.approx((1 + 1 / 3) / 2)  # 0.6667
    assert multi_gold_mrr(RANKED, ["b", "q"]) == pytest.approx((1 / 3 + 0) / 2)  # 0.1667


def test_all_gold_in_top_and_jaccard_and_percentile():
    assert all_gold_in_top(RANKED, ["a", "b"], 3) == 1.0
    assert all_gold_in_top(RANKED, ["a", "z"], 3) == 0.0
    assert jaccard(["a", "b", "c"], ["b", "c", "d"]) == pytest.approx(2 / 4)
    assert percentile([1, 2, 3, 4, 5], 95) == pytest.approx(4.8)
    assert percentile([10], 50) == 10


def test_single_channel_share_counts_gold_found_by_exactly_one_channel():
    channels = {"bm25": ["a", "x"], "dense": ["a", "b"]}
    assert single_channel_gold(["a", "b", "x"], ["a", "b", "q"], channels) == (2, 1)


def test_acceptance_precision_and_recall():
    assert acceptance(["a", "b", "c", "d"], ["a", "q"]) == (0.25, 0.5)
    assert acceptance([], ["a"]) == (0.0, 0.0)


def test_miss_causes_take_the_furthest_stage_each_missed_gold_reached():
    ranked = ["x"] * 10 + ["acc"]
    counts = miss_causes(ranked, ["acc", "held", "rej", "never", "x"],
                         accepted=["acc"], held=["held"], rejected=["rej"], k=10)
    assert counts == {"never_retrieved": 1, "rejected": 1, "held_never_promoted": 1,
                      "ranked_below_k": 1}


def test_summarize_reports_agent_fields_and_miss_shares():
    rows = [
        ResultRow(ranked_keys=["a", "b"], gold_keys=["a", "c"], seconds=1.0,
                  agent=AgentFigures(accepted_keys=("a", "b"), held_keys=("c",), rejected_keys=(),
                                     llm_calls=10, usage=TokenUsage(100, 10),
                                     engine_seconds=0.5, model_wait_seconds=3.0)),
        ResultRow(ranked_keys=["d"], gold_keys=["d", "e"], seconds=3.0,
                  agent=AgentFigures(accepted_keys=("d",), held_keys=(), rejected_keys=("e",),
                                     llm_calls=20, usage=TokenUsage(300, 30),
                                     engine_seconds=1.5, model_wait_seconds=5.0)),
    ]
    out = summarize(rows, [2, 10])
    agent = out.agent
    assert agent is not None
    assert out.recall == {2: 0.5, 10: 0.5}
    assert out.mrr == pytest.approx(((1 + 0) / 2 + (1 + 0) / 2) / 2)
    assert agent.p_acc == pytest.approx((0.5 + 1.0) / 2)
    assert agent.r_acc == pytest.approx(0.5)
    assert agent.accepted_mean == 1.5 and agent.llm_calls_mean == 15
    assert agent.input_tokens_mean == 200 and agent.output_tokens_mean == 20
    assert agent.engine_seconds_median == 1.0 and agent.model_wait_seconds_median == 4.0
    assert out.latency_median_ms == pytest.approx(2000)
    assert agent.miss_attribution == {"never_retrieved": 0.0, "rejected": 0.5,
                                      "held_never_promoted": 0.5, "ranked_below_k": 0.0}
    # results.json keeps its published keys, in their order.
    assert list(out.to_json()) == [
        "n", "recall@2", "recall@10", "mrr", "all_gold@10", "latency_median_ms",
        "latency_p95_ms", "p_acc", "r_acc", "accepted_mean", "llm_calls_mean",
        "input_tokens_mean", "output_tokens_mean", "cost_mean", "quoted_words", "false_claims",
        "engine_seconds_median", "model_wait_seconds_median", "missed_gold@10",
        "miss_attribution"]
    assert out.to_json()["missed_gold@10"] == 2
    assert summarize([], [10]).to_json() == {"n": 0}


def test_a_result_row_reads_back_what_results_json_keeps():
    claim = FalseClaim(chunk_id=7, word="Paris", rationale="« Paris »")
    figures = AgentFigures(accepted_keys=("a",), held_keys=("b",), llm_calls=2,
                           usage=TokenUsage(30, 4, 1), cost=0.5, false_claims=(claim,))
    row = ResultRow(ranked_keys=["x", "a", "b"], gold_keys=["a", "z"], qid="q1",
                    question_type="MH - Generic", seconds=0.25, agent=figures)
    data = json.loads(json.dumps(row.to_json(keep_ranked=2)))
    assert data["ranked_ids"] == ["x", "a"] and data["gold_ranks"] == {"a": 2, "z": None}
    extras = data["extras"]
    assert extras["accepted_ids"] == ["a"] and "usage" not in extras
    assert (extras["input_tokens"], extras["output_tokens"], extras["cached_tokens"]) == (30, 4, 1)
    assert extras["false_claims"] == [{"chunk_id": 7, "word": "Paris", "rationale": "« Paris »"}]
    back = ResultRow.from_json(data)
    assert back.agent == figures
    assert (back.qid, back.ranked_keys, back.gold_keys) == ("q1", ["x", "a"], ["a", "z"])
    assert ResultRow.from_json({"ranked_ids": [], "gold_ids": ["a"]}).agent is None


def test_recall_by_group_counts_each_gold_document_under_its_label():
    rows = [ResultRow(ranked_keys=["p1", "d1"], gold_keys=["p1", "d2"]),
            ResultRow(ranked_keys=["d3"], gold_keys=["p2", "d3"])]
    groups = {"p1": "press", "p2": "press", "d2": "debates", "d3": "debates"}
    groups_recall = recall_by_group(rows, groups)
    assert groups_recall == {"debates": GroupRecall(k=10, recall=0.5, n_gold=2),
                             "press": GroupRecall(k=10, recall=0.5, n_gold=2)}
    assert groups_recall["press"].to_json() == {"recall@10": 0.5, "n_gold": 2}
