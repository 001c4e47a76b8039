"""One retry helper for every policy decision: same prompt again, each unusable reply reported."""

from __future__ import annotations

from tests.engine.conftest import (
    Q,
    briefing,
    finish,
    keep_plan,
    plan,
    rank_all,
    review_pending,
    run,
)

TWO = plan(("Lejeune céréales", "gaulois"), ("Lejeune céréales", "intran"))


def replies_with(rank_replies: list) -> list:
    return [TWO, review_pending("accept"), finish(), briefing(), keep_plan(),
            review_pending("accept"), finish(), briefing(), *rank_replies]


def parse_failures(sink):
    return [(e.stage, e.attempt) for e in sink.of("feedback") if e.reason == "parse_failure"]


def test_an_unusable_reply_is_asked_again_with_the_same_prompt(retriever, sink):
    replies = ["not json", TWO, *replies_with([rank_all])[1:]]
    _, chat = run(Q, replies, retriever, sink)
    assert chat.calls[0] == chat.calls[1] and chat.calls[0].name == "planner"
    assert parse_failures(sink) == [("plan", 1)]
    assert sink.of("plan")[0].fallback is False


def test_a_ranker_retry_that_succeeds_orders_the_group_without_a_stale_note(retriever, sink):
    result, chat = run(Q, replies_with(["{", rank_all]), retriever, sink)
    ranks = [c for c in chat.calls if c.name == "rank"]
    assert len(ranks) == 2 and ranks[0] == ranks[1]
    assert parse_failures(sink) == [("rank", 1)]
    group = next(g for g in sink.of("rank")[0].groups if g.llm)
    assert group.notes == ""


def test_a_ranker_that_never_answers_keeps_the_first_accepted_order(retriever, sink):
    run(Q, replies_with(["{", "{"]), retriever, sink)
    assert parse_failures(sink) == [("rank", 1), ("rank", 2)]
    group = next(g for g in sink.of("rank")[0].groups if g.llm)
    assert group.notes.startswith("ranker reply unusable")
