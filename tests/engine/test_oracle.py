"""The oracle judge: decisions from the gold ids at a set, seeded error rate, on the same engine."""

from __future__ import annotations

import pytest

from agent.engine import OfflinePolicy, run_investigation
from agent.engine.events import VerdictGiven
from agent.engine.oracle import OracleJudge, OraclePolicy
from agent.engine.sinks import ListSink
from tests.engine.conftest import Q

GOLD = ("debats:1", "intran:1")


def _verdicts(sink: ListSink) -> list[VerdictGiven]:
    return [e for e in sink.events if isinstance(e, VerdictGiven)]


@pytest.mark.parametrize("rate", [0.05, 0.10, 0.20, 0.30])
def test_the_judge_errs_at_the_rate_it_is_given(rate):
    judge = OracleJudge(["gold"], error_rate=rate, seed="q1")
    keys = ["gold" if i % 3 == 0 else f"other{i}" for i in range(20_000)]
    wrong = sum(judge.accepts(key) != (key == "gold") for key in keys)
    assert judge.decisions == len(keys) and judge.errors == wrong
    assert abs(wrong / len(keys) - rate) < 0.015


def test_a_perfect_judge_accepts_exactly_the_gold_documents():
    judge = OracleJudge(["a", "b"], seed="q")
    assert [judge.accepts(k) for k in ("a", "x", "b", "y")] == [True, False, True, False]
    assert judge.errors == 0


def test_the_errors_are_seeded_per_question():
    def draws(seed: str) -> list[bool]:
        judge = OracleJudge(["g"], error_rate=0.3, seed=seed)
        return [judge.accepts(f"d{i}") for i in range(200)]

    assert draws("q1") == draws("q1")
    assert draws("q1") != draws("q2")


@pytest.mark.parametrize("rate", [-0.1, 1.5])
def test_an_error_rate_outside_zero_to_one_is_refused(rate):
    with pytest.raises(ValueError, match="error_rate"):
        OracleJudge(["g"], error_rate=rate)


def test_the_oracle_runs_the_offline_searches_and_accepts_only_the_gold(retriever):
    offline_sink, oracle_sink = ListSink(), ListSink()
    run_investigation(Q, policy=OfflinePolicy(), retriever=retriever, sink=offline_sink)
    result = run_investigation(Q, policy=OraclePolicy(OracleJudge(GOLD, seed="q")),
                               retriever=retriever, sink=oracle_sink)
    verdicts = _verdicts(oracle_sink)
    assert verdicts, "the oracle must review what the searches found"
    for event in verdicts:
        if event.verdict != "hold" or not event.auto_held:
            assert (event.verdict == "accept") == (event.document_key in GOLD), event
    accepted = {c.document_key for chunks in result.accepted.values() for c in chunks}
    assert accepted == set(GOLD)
    assert set(result.ranked_document_keys) == set(GOLD)
    # Same plan as the offline policy: only the review decisions are replaced.
    plans = [[e.payload()["sub_questions"] for e in sink.events if e.kind == "plan"]
             for sink in (offline_sink, oracle_sink)]
    assert plans[0] == plans[1]


def test_a_judge_that_always_errs_accepts_no_gold(retriever):
    sink = ListSink()
    result = run_investigation(Q, policy=OraclePolicy(OracleJudge(GOLD, error_rate=1.0)),
                               retriever=retriever, sink=sink)
    accepted = {c.document_key for chunks in result.accepted.values() for c in chunks}
    assert accepted and not accepted & set(GOLD)
