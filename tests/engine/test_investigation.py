"""Check planning, closing stages, ranking, determinism, cancellation and replay."""

from __future__ import annotations

import contextlib
import json

from agent.engine import (
    EngineConfig,
    LLMPolicy,
    RecordingChatModel,
    ReplayChatModel,
    run_investigation,
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
from tests.fakes.chat import ScriptedChatModel
from tests.fakes.sinks import InterruptingSink

TWO = plan(("Lejeune céréales", "gaulois"), ("Lejeune céréales", "intran"))


def two_sub_questions_accepting_everything() -> list:
    return [TWO, review_pending("accept"), finish(), briefing("first"), keep_plan(),
            review_pending("accept"), finish(), briefing("second"), rank_all]


def test_planner_keeps_at_most_m_max_sub_questions(retriever, sink):
    many = plan(*[(f"q{i}", "gaulois") for i in range(4)])
    config = EngineConfig(m_max=2)
    replies = [many, finish(), briefing(), keep_plan(), finish(), briefing()]
    run(Q, replies, retriever, sink, config=config)
    event = sink.of("plan")[0]
    assert len(event.sub_questions) == 2
    assert any("beyond the limit" in note for note in event.notes)


def test_planner_maps_names_and_turns_unknown_targets_into_any(retriever, sink):
    replies = [plan(("a", "Le Gaulois"), ("b", "nowhere")), finish(), briefing(), keep_plan(),
               finish(), briefing()]
    run(Q, replies, retriever, sink)
    subs = sink.of("plan")[0].sub_questions
    assert [s.target_sub_corpus for s in subs] == ["gaulois", None]
    assert any("unknown target" in n for n in sink.of("plan")[0].notes)


def test_planner_parse_failure_is_retried_then_falls_back_to_the_question(retriever, sink):
    replies = ["nonsense", "{also nonsense", review_pending("reject"), finish(), held(),
               briefing()]
    result, _ = run(Q, replies, retriever, sink)
    assert [s.text for s in result.sub_questions] == [Q]
    assert sink.of("plan")[0].fallback is True
    assert len(sink.of("llm_call")) >= 2


def test_held_reevaluation_promotes_held_and_auto_held_chunks(retriever, sink):
    replies = [plan(("Lejeune céréales", "gaulois")), review_pending("hold"),
               search("temporal", "", date_from="1887-02-25", date_to="1887-02-25"),
               review_pending("reject"), finish(), held(1, 2), briefing(), rank_all]
    result, _ = run(Q, replies, retriever, sink)
    promoted = [e for e in sink.of("verdict") if e.source == "held_reeval"]
    assert [p.chunk_id for p in promoted] == [1, 2]
    assert promoted[1].auto_held is True
    assert sink.of("held_reeval")[0].promoted == (1, 2)
    assert {a.chunk_id for a in result.accepted[0]} == {1, 2}


def test_briefing_has_six_fields_and_is_the_channel_to_the_next_sub_question(retriever, sink):
    _, chat = run(Q, two_sub_questions_accepting_everything(), retriever, sink)
    event = sink.of("briefing")[0]
    assert set(event.payload()) - {"fallback"} == {"summary", "confirmed_facts", "confirmed_dates",
                                         "confirmed_entities", "gaps", "search_hints"}
    second_agent_prompt = chat.calls[5].user
    assert "first" in second_agent_prompt and "pain" in second_agent_prompt


def test_sub_questions_never_share_accepted_sets_or_exclusions(retriever, sink):
    # Two sub-questions asking the same words (in another order: a plan never repeats one).
    replies = [plan(("Lejeune céréales", None), ("Céréales Lejeune", None)),
               review_pending("accept"), finish(), briefing(), keep_plan(),
               review_pending("accept"), finish(), briefing(), rank_all]
    result, _ = run(Q, replies, retriever, sink)
    warm = sink.of("warm_start")
    assert warm[0].document_keys == warm[1].document_keys
    assert [a.document_key for a in result.accepted[0]] == [a.document_key
                                                            for a in result.accepted[1]]


def test_replanner_may_add_sub_questions_but_never_beyond_m_max(retriever, sink):
    config = EngineConfig(m_max=3)
    bigger = json.dumps({"remaining": [
        {"text": t, "target_sub_corpus": "debats", "entities": [], "target_date": None}
        for t in ("x", "y", "z")], "rationale": "gaps"})
    nothing = plan(("zzzz", "gaulois"), ("yyyy", "intran"))
    replies = [nothing, finish(), briefing(), bigger, finish(), briefing(), keep_plan(), finish(),
               briefing()]
    result, _ = run(Q, replies, retriever, sink, config=config)
    assert len(result.sub_questions) == 3
    event = sink.of("replan")[0]
    assert [s.text for s in event.after] == ["X ?", "Y ?"]  # made well formed
    assert any("beyond the limit" in n for n in event.notes)


def test_ranking_groups_by_count_and_calls_the_ranker_only_for_groups_of_two(retriever, sink):
    replies = [plan(("Lejeune céréales", None), ("sucres budget", None)),
               review_pending("accept"), finish(), briefing(), keep_plan(),
               review_pending("accept"), finish(), briefing(), rank_all]
    result, chat = run(Q, replies, retriever, sink)
    rank = sink.of("rank")[0]
    counts = [g.count for g in rank.groups]
    assert counts == sorted(counts, reverse=True)
    assert all(g.llm == (len(g.documents) >= 2) for g in rank.groups)
    assert sum(1 for c in chat.calls if c.role == "reranker") == sum(
        1 for g in rank.groups if len(g.documents) >= 2)
    assert result.ranked_document_keys == list(rank.ranked)
    rank_prompt = next(c.user for c in chat.calls if c.role == "reranker")
    assert "défend le droit" not in rank_prompt  # rationales only, never the full text


def test_held_documents_are_returned_separately(retriever, sink):
    replies = [plan(("Lejeune céréales", "gaulois")), review_pending("hold"), finish(), held(),
               briefing()]
    result, _ = run(Q, replies, retriever, sink)
    assert result.ranked_document_keys == []
    assert result.held_document_keys == ["gaulois:1", "gaulois:3"]


def strip_timing(events):
    def clean(value):
        if isinstance(value, dict):
            return {k: clean(v) for k, v in value.items() if not k.endswith("seconds")}
        if isinstance(value, list):
            return [clean(v) for v in value]
        return value

    return [(e.seq, e.kind, e.sub_question_index, clean(e.payload())) for e in events]


def test_same_responses_and_results_give_the_same_event_sequence(retriever):
    first, second = ListSink(), ListSink()
    run(Q, two_sub_questions_accepting_everything(), retriever, first)
    run(Q, two_sub_questions_accepting_everything(), retriever, second)
    assert strip_timing(first.events) == strip_timing(second.events)
    assert [e.seq for e in first.events] == list(range(1, len(first.events) + 1))


def test_cancellation_stops_cleanly_between_steps(retriever):
    sink = InterruptingSink(cancel_after=6)
    result, chat = run(Q, two_sub_questions_accepting_everything(), retriever, sink)
    assert result.status == "cancelled"
    assert sink.events[-1].kind == "finish" and sink.events[-1].status == "cancelled"
    assert all(c.role != "reranker" for c in chat.calls)


def test_interrupted_investigation_replays_without_asking_the_model_again(retriever):
    full_sink = ListSink()
    full, _ = run(Q, two_sub_questions_accepting_everything(), retriever, full_sink)
    broken = InterruptingSink(fail_after=14)
    chat = RecordingChatModel(ScriptedChatModel(two_sub_questions_accepting_everything()))
    with contextlib.suppress(RuntimeError):
        run_investigation(Q, policy=LLMPolicy(chat), retriever=retriever, sink=broken)
    recorded = chat.recorded  # every reply paid for before the sink failed
    assert 0 < len(recorded) < full.counters.llm_calls
    inner = ScriptedChatModel(two_sub_questions_accepting_everything()[len(recorded):])
    replay = ReplayChatModel(inner, recorded)
    resumed_sink = ListSink()
    resumed = run_investigation(Q, policy=LLMPolicy(replay), retriever=retriever,
                                sink=resumed_sink)
    assert replay.replayed == len(recorded)
    assert len(inner.calls) == full.counters.llm_calls - len(recorded)
    assert resumed.ranked_document_keys == full.ranked_document_keys
    assert strip_timing(resumed_sink.events) == strip_timing(full_sink.events)


def test_counters_add_up_the_model_usage(retriever, sink):
    result, chat = run(Q, two_sub_questions_accepting_everything(), retriever, sink)
    calls = sink.of("llm_call")
    assert result.counters.llm_calls == len(chat.calls) == len(calls)
    assert result.counters.usage == TokenUsage.total(c.usage for c in calls)
    assert result.counters.engine_seconds >= 0 and result.counters.model_seconds >= 0


def test_llm_call_events_record_prompt_name_and_hash(retriever, sink):
    run(Q, two_sub_questions_accepting_everything(), retriever, sink)
    names = [e.prompt_name for e in sink.of("llm_call")]
    assert names[:4] == ["planner", "agent", "agent", "briefing"]
    assert all(len(e.prompt_hash) == 64 for e in sink.of("llm_call"))


def test_user_sub_corpus_and_dates_constrain_the_whole_investigation(retriever, sink):
    replies = [TWO, review_pending("accept"), search("bm25", "céréales pain"), finish(),
               briefing(), keep_plan(), review_pending("accept"), finish(), briefing()]
    result, _ = run(Q, replies, retriever, sink, sub_corpus="intran", date_to="1887-02-27")
    assert all(s.target_sub_corpus == "intran" for s in result.sub_questions)
    docs = {a.document_key for chunks in result.accepted.values() for a in chunks}
    assert docs == {"intran:1"}
    assert "empty_result" in [e.reason for e in sink.of("feedback")]


def test_a_model_decided_verdict_names_the_model_call_that_gave_it(retriever, sink):
    replies = [plan(("Lejeune céréales", "gaulois")), review_pending("hold"),
               search("temporal", "", date_from="1887-02-25", date_to="1887-02-25"),
               review_pending("reject"), finish(), held(1, 2), briefing(), rank_all]
    run(Q, replies, retriever, sink)
    calls = {event.seq: event for event in sink.of("llm_call")}
    verdicts = sink.of("verdict")
    decided = [v for v in verdicts if v.source in ("agent", "held_reeval")]
    assert {v.source for v in decided} == {"agent", "held_reeval"}
    for verdict in decided:
        call = calls[verdict.model_call_seq]
        assert call.seq < verdict.seq and call.sub_question_index == verdict.sub_question_index
        assert call.role == "agent"
        later_calls = [s for s in calls if call.seq < s < verdict.seq]
        assert not later_calls, "the latest call before the verdict gave it"
    assert all(v.model_call_seq is None for v in verdicts if v.source == "auto")
