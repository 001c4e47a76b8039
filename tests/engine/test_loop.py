"""Check the agent loop's invariants one behaviour at a time."""

from __future__ import annotations

import json

from agent.engine import EngineConfig
from tests.engine.conftest import (
    Q,
    briefing,
    finish,
    held,
    pending_ids,
    plan,
    rank_all,
    review,
    review_pending,
    run,
    search,
)

ONE = plan(("Lejeune céréales", "gaulois"))


def steps(sink):
    return sink.of("step")


def feedback(sink):
    return [e.reason for e in sink.of("feedback")]


def test_warm_start_candidates_become_the_first_pending_batch(retriever, sink):
    result, chat = run(Q, [ONE, review_pending("reject"), finish(), briefing()], retriever, sink)
    warm = sink.of("warm_start")[0]
    assert warm.sub_corpus == "gaulois"
    assert warm.chunk_ids and set(warm.document_keys) <= {"gaulois:1", "gaulois:2",
                                                                "gaulois:3"}
    first_agent_prompt = chat.calls[1].user
    assert pending_ids(first_agent_prompt) == list(warm.chunk_ids)


def test_target_steers_only_the_warm_start_and_agent_may_search_elsewhere(retriever, sink):
    replies = [ONE, review_pending("reject"), search("bm25", "céréales", sub_corpus="intran"),
               review_pending("reject"), finish(), briefing()]
    run(Q, replies, retriever, sink)
    searched = sink.of("search")[0]
    assert searched.sub_corpus == "intran"
    assert set(searched.document_keys) <= {"intran:1", "intran:2"}


def test_search_while_batch_pending_is_feedback_without_budget(retriever, sink):
    replies = [ONE, search("bm25", "pain"), review_pending("reject"), finish(), briefing()]
    run(Q, replies, retriever, sink)
    assert feedback(sink)[0] == "alternation_violation"
    assert [s.productive for s in steps(sink)] == [False, True, False]
    assert [s.effective_step for s in steps(sink)] == [0, 1, 1]


def test_review_with_nothing_pending_is_feedback(retriever, sink):
    replies = [ONE, review_pending("reject"), review((1, "accept")), finish(), briefing()]
    run(Q, replies, retriever, sink)
    assert "alternation_violation" in feedback(sink)
    assert steps(sink)[1].productive is False


def test_missing_verdicts_are_held_and_unknown_ids_ignored(retriever, sink):
    def partial(prompt):
        ids = pending_ids(prompt.user)
        return review((ids[0], "reject"), (999, "accept"))

    replies = [ONE, partial, finish(), held(), briefing()]
    run(Q, replies, retriever, sink)
    verdicts = sink.of("verdict")
    warm_ids = sink.of("warm_start")[0].chunk_ids
    assert len(verdicts) == len(warm_ids)
    assert all(v.verdict == "hold" and v.source == "auto" for v in verdicts[1:])
    assert 999 not in [v.chunk_id for v in verdicts]
    assert "review_incomplete" in feedback(sink)


def test_accept_excludes_the_parent_document_from_later_retrieval(retriever, sink):
    def accept_chunk_1(prompt):
        ids = pending_ids(prompt.user)
        return review(*[(c, "accept" if c == 1 else "reject") for c in ids])

    replies = [ONE, accept_chunk_1, search("bm25", "agriculture protection céréales"),
               review_pending("reject"), finish(), briefing()]
    run(Q, replies, retriever, sink)
    searched = sink.of("search")[0]
    assert "gaulois:1" not in searched.document_keys
    assert searched.excluded_documents == 1


def test_reject_excludes_only_that_chunk_so_siblings_stay_reachable(retriever, sink):
    replies = [ONE, review_pending("reject"), search("substring", "Suite"),
               review_pending("reject"), finish(), briefing()]
    run(Q, replies, retriever, sink)
    warm_ids = sink.of("warm_start")[0].chunk_ids
    assert 1 in warm_ids and 2 not in warm_ids
    searched = sink.of("search")[0]
    assert searched.chunk_ids == (2,)


def test_held_pool_is_bounded_and_drops_are_recorded(retriever, sink):
    config = EngineConfig(held_pool_size=1)
    replies = [ONE, review_pending("hold"), finish(), held(), briefing()]
    run(Q, replies, retriever, sink, config=config)
    warm_ids = sink.of("warm_start")[0].chunk_ids
    assert len(warm_ids) == 2
    drops = sink.of("held_drop")
    assert [d.chunk_id for d in drops] == [warm_ids[0]]
    assert sink.of("held_reeval")[0].kept == warm_ids[1:]


def test_temporal_search_is_widened_silently_and_widening_results_are_auto_held(retriever, sink):
    replies = [ONE, review_pending("reject"),
               search("temporal", "", date_from="1887-02-25", date_to="1887-02-25"),
               review_pending("accept"), finish(), held(), briefing()]
    result, chat = run(Q, replies, retriever, sink)
    searched = sink.of("search")[0]
    assert (searched.asked_date_from, searched.asked_date_to) == ("1887-02-25",
                                                                        "1887-02-25")
    assert (searched.date_from, searched.date_to) == ("1887-02-24", "1887-02-26")
    auto = [e for e in sink.of("verdict") if e.auto_held]
    assert {a.chunk_id for a in auto} == {2}  # 10 was already seen in the warm start
    assert all(a.verdict == "hold" and a.source == "auto" for a in auto)
    review_prompt = chat.calls[3].user
    assert set(pending_ids(review_prompt)) == {7, 8}
    assert "1887-02-24" not in review_prompt and "1887-02-26" not in review_prompt
    accepted_docs = {a.document_key for a in result.accepted[0]}
    assert accepted_docs == {"debats:1"}


def test_memory_is_replaced_wholesale_at_every_step(retriever, sink):
    replies = [ONE, review_pending("reject", tag="1"), finish(tag="2"), briefing()]
    _, chat = run(Q, replies, retriever, sink)
    memories = [s.memory for s in steps(sink)]
    assert memories[0].next_steps == "ns1" and memories[1].next_steps == "ns2"
    assert "ns1" in chat.calls[2].user and "pf1" in chat.calls[2].user


def test_action_log_shows_only_the_last_eight_entries(retriever, sink):
    replies = [ONE, review_pending("reject")]
    replies += [search("bm25", f"terme{i}") for i in range(10)]
    replies += [finish(), briefing()]
    _, chat = run(Q, replies, retriever, sink)
    last_prompt = chat.calls[-2].user
    log = last_prompt.split("Recent actions (last 8):")[1].split("\n\n")[0]
    assert len([line for line in log.splitlines() if line.startswith("- ")]) == 8
    assert "terme9" in log and "terme0" not in log


def test_duplicate_query_is_feedback_without_budget(retriever, sink):
    replies = [ONE, review_pending("reject"), search("bm25", "pain"), review_pending("reject"),
               search("bm25", "  PAIN "), finish(), briefing()]
    run(Q, replies, retriever, sink)
    assert feedback(sink) == ["duplicate_query"]
    assert [s.effective_step for s in steps(sink)] == [1, 2, 3, 3, 3]


def test_empty_result_is_feedback_without_budget(retriever, sink):
    replies = [ONE, review_pending("reject"), search("bm25", "zzzz introuvable"), finish(),
               briefing()]
    run(Q, replies, retriever, sink)
    assert feedback(sink) == ["empty_result"]
    assert steps(sink)[1].productive is False


def test_parse_failures_are_feedback_and_bounded(retriever, sink):
    config = EngineConfig(max_consecutive_parse_failures=2)
    replies = [ONE, "not json at all", review_pending("reject"), "{broken", "still broken",
               briefing()]
    result, chat = run(Q, replies, retriever, sink, config=config)
    assert feedback(sink) == ["parse_failure"] * 3
    assert result.finish_reasons[0] == "parse_failures"
    assert "could not be used" in chat.calls[2].user
    assert steps(sink)[0].effective_step == 1


def test_two_consecutive_identical_searches_force_termination(retriever, sink):
    replies = [ONE, search("bm25", "pain"), search("bm25", "pain"), held(), briefing()]
    result, _ = run(Q, replies, retriever, sink)
    assert result.finish_reasons[0] == "repeated_search"
    assert feedback(sink) == ["alternation_violation", "repeated_search"]


def test_step_budget_counts_only_productive_actions(retriever, sink):
    config = EngineConfig(step_budget=2)
    replies = [ONE, "garbage", review_pending("reject"), search("bm25", "zzzz"),
               search("bm25", "pain"), held(), briefing()]
    result, _ = run(Q, replies, retriever, sink, config=config)
    assert result.finish_reasons[0] == "budget"
    assert sink.of("subquestion_finish")[0].effective_steps == 2
    assert sink.of("subquestion_finish")[0].raw_steps == 4


def test_raw_step_cap_stops_a_loop_that_never_progresses(retriever, sink):
    config = EngineConfig(max_raw_steps=4)
    replies = [ONE] + [search("bm25", f"x{i}") for i in range(4)] + [held(), briefing()]
    result, _ = run(Q, replies, retriever, sink, config=config)
    assert result.finish_reasons[0] == "max_raw_steps"


def test_long_rationales_are_truncated_to_120_characters_not_rejected(retriever, sink):
    def long(prompt):
        return review(*[(c, "accept", "x" * 300) for c in pending_ids(prompt.user)])

    result, _ = run(Q, [ONE, long, finish(), briefing(), rank_all], retriever, sink)
    verdicts = sink.of("verdict")
    assert all(len(v.rationale) == 120 and v.rationale_truncated for v in verdicts)
    assert all(len(a.rationale) == 120 for a in result.accepted[0])


def test_a_long_rationale_is_cut_between_words_and_marked(retriever, sink):
    words = "Rapporte le discours de M. Lejeune sur le droit des céréales " * 4

    def long(prompt):
        return review(*[(c, "accept", words) for c in pending_ids(prompt.user)])

    run(Q, [ONE, long, finish(), briefing(), rank_all], retriever, sink)
    for verdict in sink.of("verdict"):
        assert len(verdict.rationale) <= 120 and verdict.rationale.endswith("…")
        assert words.startswith(verdict.rationale[:-1])
        assert verdict.rationale[:-1].split()[-1] in words.split()


def test_unreviewed_pending_chunks_are_held_when_the_loop_ends(retriever, sink):
    config = EngineConfig(max_raw_steps=1)
    result, _ = run(Q, [ONE, search("bm25", "pain"), held(), briefing()], retriever, sink,
                    config=config)
    reasons = {e.reason for e in sink.of("verdict")}
    assert reasons == {"unreviewed"}


def test_step_event_carries_thought_action_args_memory_and_counters(retriever, sink):
    run(Q, [ONE, review_pending("reject"), finish(), briefing()], retriever, sink)
    step = steps(sink)[0]
    assert set(step.payload()) >= {"thought", "action", "args", "memory", "effective_step",
                                   "productive"}
    assert set(step.payload()["memory"]) == {"prior_findings", "question_analysis",
                                             "evidence_gathered", "gaps_remaining", "next_steps"}
    json.dumps([e.to_json() for e in sink.events])


def test_a_full_held_pool_drops_auto_held_first_then_the_weakest_signals_then_the_oldest():
    from agent.engine.state import HeldPool
    from agent.engine.types import HeldChunk, VerdictSignals
    from tests.fakes.retriever import chunk

    def held(chunk_id, *, auto=False, passage=None):
        signals = None if passage is None else VerdictSignals(
            query_terms=4, matched_terms=(), found_by="bm25", batch_rank=1,
            passage_terms=passage, sentence_terms=passage)
        return HeldChunk(hit=chunk(chunk_id, chunk_id, f"d:{chunk_id}", "d", None, "texte"),
                         rationale="", auto_held=auto, order=chunk_id, signals=signals)

    pool = HeldPool(2)
    assert pool.add(held(1, passage=4)) is None and pool.add(held(2, auto=True)) is None
    assert pool.add(held(3, passage=2)).hit.chunk_id == 2  # the engine's own hold goes first
    assert pool.add(held(4, passage=5)).hit.chunk_id == 3  # then the weakest signals
    assert pool.add(held(5)).hit.chunk_id == 1  # 4 says more than 1
    assert pool.add(held(6, passage=1)).hit.chunk_id == 5  # a hold without signals first
    assert pool.add(held(7, passage=5)).hit.chunk_id == 6
    assert pool.add(held(8, passage=5)).hit.chunk_id == 4  # of equal signals, the oldest
    assert [h.hit.chunk_id for h in pool.items] == [7, 8]


def test_only_a_source_a_day_outside_the_window_is_held_for_its_date(retriever, sink):
    # The temporal channel ranks every dated document by distance: one dated days away from
    # the window is dropped, neither shown nor held "just outside" it.
    replies = [ONE, review_pending("reject"),
               search("temporal", "", date_from="1887-02-20", date_to="1887-02-20"),
               finish(), held(), briefing()]
    run(Q, replies, retriever, sink)
    searched = sink.of("search")[0]
    assert (searched.date_from, searched.date_to) == ("1887-02-19", "1887-02-21")
    assert searched.document_keys == ()
    assert [e for e in sink.of("verdict") if e.auto_held] == []
