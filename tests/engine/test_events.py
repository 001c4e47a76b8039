"""The event catalogue: every kind a run emits is typed and survives a JSON round trip."""

from __future__ import annotations

import json

import pytest

from agent.engine import EngineConfig, OfflinePolicy, event_from_json, run_investigation
from agent.engine.events import (
    CATALOGUE,
    InvestigationFinished,
    ModelCalled,
    SubQuestionFinished,
    VerdictGiven,
)
from agent.engine.sinks import ListSink
from common.usage import TokenUsage
from tests.engine.conftest import (
    Q,
    briefing,
    finish,
    held,
    keep_plan,
    plan,
    rank_all,
    review_pending,
    run,
    search,
)


def _llm_run(retriever) -> ListSink:
    """A scripted run that emits every kind of event, a held drop and an error included."""
    sink = ListSink()
    replies = [plan(("Lejeune céréales", "gaulois"), ("Lejeune céréales", "intran")),
               review_pending("hold"), "not json",
               search("temporal", "", date_from="1887-02-25", date_to="1887-02-25"),
               review_pending("accept"), finish(), held(1), "bad", "worse", keep_plan(),
               review_pending("accept"), finish(), briefing(), rank_all]
    run(Q, replies, retriever, sink, config=EngineConfig(held_pool_size=1))
    return sink


def test_a_run_emits_every_kind_of_the_catalogue(retriever):
    sink = _llm_run(retriever)
    assert set(sink.kinds()) == set(CATALOGUE)


@pytest.mark.parametrize("policy", ["llm", "offline"])
def test_every_event_survives_a_json_round_trip(retriever, policy):
    if policy == "llm":
        sink = _llm_run(retriever)
    else:
        sink = ListSink()
        run_investigation(Q, policy=OfflinePolicy(max_accepted=1), retriever=retriever, sink=sink)
    for event in sink.events:
        stored = json.loads(json.dumps(event.to_json()))
        assert event_from_json(stored) == event
        assert type(event_from_json(stored)) is type(event)


def test_a_sub_question_and_the_investigation_finish_with_different_kinds(retriever):
    sink = ListSink()
    run_investigation(Q, policy=OfflinePolicy(), retriever=retriever, sink=sink)
    ends = [e for e in sink.events if isinstance(e, (SubQuestionFinished, InvestigationFinished))]
    assert all(isinstance(e, SubQuestionFinished) for e in ends[:-1])
    assert all(e.sub_question_index is not None for e in ends[:-1])
    assert isinstance(ends[-1], InvestigationFinished) and ends[-1].sub_question_index is None
    assert ends[-1] is sink.events[-1]


def test_the_llm_call_event_carries_usage_but_never_the_reply(retriever):
    sink = _llm_run(retriever)
    for event in sink.of("llm_call"):
        assert "response" not in event.to_json()
        assert event.prompt_hash and event.usage.input_tokens > 0


def test_offline_verdicts_carry_their_figures_as_signals(retriever):
    sink = ListSink()
    run_investigation(Q, policy=OfflinePolicy(), retriever=retriever, sink=sink)
    verdicts = [e for e in sink.events if isinstance(e, VerdictGiven) and e.source == "agent"]
    assert verdicts and all(v.signals is not None for v in verdicts)
    first = verdicts[0].signals
    assert first.found_by == "warm_start" and first.batch_rank == 1
    assert first.matched_terms and first.query_terms >= len(first.matched_terms)
    for verdict in verdicts:
        assert verdict.evidence is not None and verdict.evidence.text
        assert not any(char.isdigit() for char in verdict.rationale)


def test_a_verdict_with_its_evidence_survives_a_json_round_trip(retriever):
    sink = ListSink()
    run_investigation(Q, policy=OfflinePolicy(), retriever=retriever, sink=sink)
    verdict = next(e for e in sink.events if isinstance(e, VerdictGiven) and e.evidence)
    again = event_from_json(verdict.to_json())
    assert again == verdict and again.evidence == verdict.evidence


def test_token_usage_is_stored_as_its_three_flat_counts():
    # Rows and files written before the usage had a type hold these keys: they must still read.
    called = ModelCalled(role="agent", prompt_name="agent", prompt_hash="x" * 64, model="m",
                         usage=TokenUsage(10, 3, 2), seconds=0.5, seq=4)
    data = called.to_json()
    assert "usage" not in data
    assert (data["input_tokens"], data["output_tokens"], data["cached_tokens"]) == (10, 3, 2)
    assert event_from_json(json.loads(json.dumps(data))) == called
    finished = InvestigationFinished(status="finished", reason="completed", llm_calls=1,
                                     usage=TokenUsage(10, 3, 2))
    assert finished.payload()["input_tokens"] == 10
    assert event_from_json(finished.to_json()) == finished


def test_reading_ignores_unknown_keys_and_fills_later_fields_with_defaults():
    event = event_from_json({"kind": "llm_call", "seq": 3, "sub_question_index": None,
                             "role": "agent", "prompt_name": "agent", "prompt_hash": "x" * 64,
                             "response": "{}", "input_tokens": 10})
    assert event.seq == 3 and event.usage == TokenUsage(input_tokens=10)
    verdict = event_from_json({"kind": "verdict", "seq": 4, "sub_question_index": 0, "chunk_id": 1,
                               "document_key": "gaulois:1", "sub_corpus": "gaulois",
                               "verdict": "accept", "rationale": "why"})
    assert verdict.signals is None and verdict.reason is None and verdict.evidence is None
    with pytest.raises(ValueError, match="unknown event kind"):
        event_from_json({"kind": "dance"})
