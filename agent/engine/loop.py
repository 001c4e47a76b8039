"""Run one sub-question: warm start, then alternating search and review under a step budget."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from agent.engine.config import EngineConfig
from agent.engine.events import (
    AgentStepTaken,
    Event,
    FeedbackGiven,
    HeldChunkDropped,
    SearchRan,
    VerdictGiven,
    WarmStartRan,
)
from agent.engine.evidence import evidence_span
from agent.engine.parsing import OutputParseError
from agent.engine.policy import ModelCallSummary, Policy, StepContext
from agent.engine.ports import Retriever
from agent.engine.recorder import Recorder
from agent.engine.schemas import (
    ActionArgs,
    AgentStep,
    Briefing,
    ChunkDecision,
    ReviewArgs,
    SearchArgs,
)
from agent.engine.state import (
    HeldPool,
    LoopState,
    Scope,
    SearchKey,
    date_window,
    inside,
    target_day,
    widen,
)
from agent.engine.text import (
    content_terms,
    is_full_date,
    name_keys,
    normalise_query,
    strip_mentions,
    sub_question_query,
)
from agent.engine.types import (
    AcceptedChunk,
    EvidenceSpan,
    HeldChunk,
    Memory,
    SubQuestionSpec,
    VerdictSignals,
)
from agent.engine.wording import language_of, phrase, window_phrase
from common.search import Hit, SearchRequest, SubCorpusInfo


@dataclass
class LoopEnv:
    """Bundle what every sub-question loop of an investigation shares (read-only)."""

    question: str
    policy: Policy
    retriever: Retriever
    recorder: Recorder
    config: EngineConfig
    scope: Scope
    slugs: list[str]
    sub_corpora: list[SubCorpusInfo]
    briefings: list[Briefing] = field(default_factory=list)

    @property
    def language(self) -> str:
        """Return the question's language, the one rationales are written in."""
        return language_of(self.question)

    def evidence(self, hit: Hit, sub_question: SubQuestionSpec,
                 quote: str = "") -> EvidenceSpan | None:
        """Locate a verdict's evidence: the quote, else the sentences richest in q's terms."""
        terms = content_terms(strip_mentions(self.question, self.sub_corpora))
        return evidence_span(hit, quote=quote, terms=terms, names=name_keys(sub_question.entities))


@dataclass
class StepOutcome:
    """Describe what one parsed step did."""

    productive: bool
    log: str
    events: list[Event] = field(default_factory=list)
    finish: str | None = None


def describe(hits: list[Hit]) -> dict[str, Any]:
    """Summarise found hits for a warm start or search event, in retrieval order."""
    return {
        "chunk_ids": tuple(h.chunk_id for h in hits),
        "document_keys": tuple(h.document_key for h in hits),
        "channel_ranks": tuple(dict(sorted(h.channel_ranks.items())) for h in hits),
    }


def cap_query(query: str, limit: int) -> tuple[str, FeedbackGiven | None]:
    """Cut a query longer than the limit at a word boundary; say so in a feedback event."""
    if len(query) <= limit:
        return query, None
    cut = query[:limit]
    if " " in cut[limit // 2:]:
        cut = cut.rsplit(" ", 1)[0]
    return cut, FeedbackGiven(reason="query_truncated", message=(
        f"the query was {len(query)} characters long; only its first {len(cut)} were searched"))


def truncate(rationale: str, limit: int) -> tuple[str, bool]:
    """Cut a rationale to the limit at a word boundary, marked "…"; report whether it was cut."""
    text = " ".join((rationale or "").split())
    if len(text) <= limit:
        return text, False
    head = text[: limit - 1]
    if " " in head[limit // 2 :]:
        head = head.rsplit(" ", 1)[0].rstrip(" ,;:")
    return head + "…", True


def verdict_event(hit: Hit, verdict: str, rationale: str, *, source: str, auto_held: bool,
                  **extra: Any) -> VerdictGiven:
    """Describe a verdict on one hit."""
    return VerdictGiven(chunk_id=hit.chunk_id, document_key=hit.document_key,
                        sub_corpus=hit.sub_corpus, verdict=verdict, rationale=rationale,
                        auto_held=auto_held, source=source, **extra)


def decided_by_call(event: Event, model_call_seq: int | None) -> Event:
    """Link an agent's verdict to the model call whose reply gave it."""
    if isinstance(event, VerdictGiven) and event.source == "agent" and model_call_seq is not None:
        return dataclasses.replace(event, model_call_seq=model_call_seq)
    return event


def hold(state: LoopState, hit: Hit, rationale: str, *, auto: bool, reason: str, source: str,
         evidence: EvidenceSpan | None, signals: VerdictSignals | None = None) -> list[Event]:
    """Put a chunk in the held pool and describe it (and any chunk dropped to make room)."""
    state.seen_chunks.add(hit.chunk_id)
    state.texts[hit.chunk_id] = hit.text
    held = HeldChunk(hit=hit, rationale=rationale, auto_held=auto, order=state.next_order(),
                     signals=signals, evidence=evidence)
    dropped = state.held.add(held)
    events: list[Event] = [verdict_event(hit, "hold", rationale, source=source, auto_held=auto,
                                         reason=reason, signals=signals, evidence=evidence)]
    if dropped is not None:
        events.append(HeldChunkDropped(chunk_id=dropped.hit.chunk_id,
                                       document_key=dropped.hit.document_key,
                                       auto_held=dropped.auto_held, pool_size=state.held.size))
    return events


def _search(env: LoopEnv, state: LoopState, args: ActionArgs) -> StepOutcome:
    try:
        parsed = args if isinstance(args, SearchArgs) else SearchArgs.model_validate(args)
    except ValidationError as exc:
        state.last_attempt = None
        return _feedback("invalid_action", f"invalid search arguments: {exc.errors()[0]['msg']}")
    query = parsed.query.strip()
    sub_corpus = parsed.sub_corpus or None
    key: SearchKey = (parsed.channel, normalise_query(query), parsed.date_from, parsed.date_to,
                      sub_corpus)
    label = f"search {parsed.channel} {cap_query(query, env.config.query_max_chars)[0]!r}"
    if parsed.channel == "temporal":
        label += f" [{parsed.date_from or '…'} → {parsed.date_to or '…'}]"
    if sub_corpus:
        label += f" in {sub_corpus}"
    if key == state.last_attempt:
        outcome = _feedback("repeated_search", "the same search was attempted twice in a row; "
                            "this sub-question ends here", log=label)
        outcome.finish = "repeated_search"
        return outcome
    state.last_attempt = key
    if state.pending:
        return _feedback("alternation_violation",
                         f"{len(state.pending)} chunks are pending: review them before searching",
                         log=label)
    if sub_corpus is not None and sub_corpus not in env.slugs:
        return _feedback("invalid_action", f"unknown sub_corpus {sub_corpus!r}; use one of "
                         + ", ".join(env.slugs) + " or null", log=label)
    if parsed.channel == "temporal":
        bad = [d for d in (parsed.date_from, parsed.date_to) if d and not is_full_date(d)]
        if bad or not (parsed.date_from or parsed.date_to):
            return _feedback("invalid_action", "temporal search needs date_from and/or date_to "
                             "as YYYY-MM-DD", log=label)
    elif not query:
        return _feedback("invalid_action", f"{parsed.channel} search needs a query", log=label)
    if key in state.search_keys:
        return _feedback("duplicate_query", f"{label} was already run in this sub-question; "
                         "try another channel, wording or sub-corpus", log=label)
    state.search_keys.add(key)
    return _run_search(env, state, parsed, query, sub_corpus, label)


def _run_search(env: LoopEnv, state: LoopState, parsed: SearchArgs, query: str,
                sub_corpus: str | None, label: str) -> StepOutcome:
    scope = env.scope
    forced = bool(scope.sub_corpus and sub_corpus != scope.sub_corpus)
    effective_sub = scope.sub_corpus or sub_corpus
    date_from, date_to = parsed.date_from, parsed.date_to
    if parsed.channel == "temporal":
        # The window is silently widened for the retriever; the agent never sees it.
        date_from, date_to = widen(date_from, date_to, env.config.temporal_widen_days)
    elif scope.date_from or scope.date_to:
        date_from, date_to = scope.date_from, scope.date_to
    state.searches.append(parsed.model_copy(update={"query": query, "sub_corpus": sub_corpus}))
    query, cut = cap_query(query, env.config.query_max_chars)
    exclude_chunks, exclude_documents = state.exclusions()
    found = _retrieve(env, parsed.channel, query, date_from, date_to, effective_sub,
                      exclude_chunks, exclude_documents)
    found = [h for h in found if h.chunk_id not in exclude_chunks
             and h.document_key not in exclude_documents and scope.admits(h)]
    shown, widened = found, []
    if parsed.channel == "temporal":
        # The channel ranks by distance, past any window: only a source within the widening
        # (a day) of the window asked is kept, held for its date; farther ones are dropped.
        found = [h for h in found if inside(h, date_from, date_to)]
        shown = [h for h in found if inside(h, parsed.date_from, parsed.date_to)]
        widened = [h for h in found if not inside(h, parsed.date_from, parsed.date_to)]
    events: list[Event] = [SearchRan(
        channel=parsed.channel, query=query,
        asked_date_from=parsed.date_from, asked_date_to=parsed.date_to,
        date_from=date_from, date_to=date_to,
        sub_corpus=effective_sub, sub_corpus_forced=forced,
        excluded_chunks=len(exclude_chunks), excluded_documents=len(exclude_documents),
        **describe(found),
        shown_chunk_ids=tuple(h.chunk_id for h in shown),
    )]
    if cut is not None:
        events.insert(0, cut)
    window = window_phrase(parsed.date_from or parsed.date_to, parsed.date_to or parsed.date_from,
                           env.language)
    for hit in widened:
        events += hold(state, hit, phrase(env.language, "widened", window=window),
                       auto=True, reason="widened_window", source="auto",
                       evidence=env.evidence(hit, state.sub_question))
    if not shown:
        outcome = _feedback("empty_result", f"{label} returned no new chunks; "
                            "change channel, terms or sub-corpus", log=label)
        outcome.events = events + outcome.events
        return outcome
    for hit in shown:
        state.seen_chunks.add(hit.chunk_id)
        state.texts[hit.chunk_id] = hit.text
    state.pending = list(shown)
    return StepOutcome(True, f"{label} → {len(shown)} chunks to review", events)


def _retrieve(env: LoopEnv, channel: str, query: str, date_from: str | None,
              date_to: str | None, sub_corpus: str | None, exclude_chunks: frozenset[int],
              exclude_documents: frozenset[str]) -> list[Hit]:
    """Run one channel search; a window that is not made of two readable days finds nothing."""
    try:
        window = date_window(date_from, date_to)
    except ValueError:
        return []
    if channel == "temporal" and window is None:
        return []
    return env.retriever.search(SearchRequest(
        channel=channel, query=query, window=window,
        sub_corpora=(sub_corpus,) if sub_corpus else None,
        exclude_chunk_ids=tuple(sorted(exclude_chunks)),
        exclude_document_keys=tuple(sorted(exclude_documents)),
        limit=env.config.search_limit))


def _review(env: LoopEnv, state: LoopState, args: ActionArgs) -> StepOutcome:
    state.last_attempt = None
    if not state.pending:
        return _feedback("alternation_violation", "nothing is pending: search or finish",
                         log="review")
    try:
        parsed = args if isinstance(args, ReviewArgs) else ReviewArgs.model_validate(args)
    except ValidationError as exc:
        return _feedback("invalid_action", f"invalid review arguments: {exc.errors()[0]['msg']}",
                         log="review")
    pending_ids = [c.chunk_id for c in state.pending]
    chosen: dict[int, ChunkDecision] = {}
    unknown: list[int] = []
    for given in parsed.verdicts:
        if given.chunk_id not in pending_ids:
            unknown.append(given.chunk_id)
        else:
            chosen.setdefault(given.chunk_id, given)
    if not chosen:
        return _feedback("invalid_action", "no verdict names a pending chunk; pending chunk ids: "
                         + ", ".join(map(str, pending_ids)), log="review")
    events: list[Event] = []
    tally = {"accept": 0, "reject": 0, "hold": 0}
    missing: list[int] = []
    limit = env.config.rationale_max
    for hit in state.pending:
        verdict = chosen.get(hit.chunk_id)
        if verdict is None:
            missing.append(hit.chunk_id)
            tally["hold"] += 1
            events += hold(state, hit, phrase(env.language, "missing_verdict"), auto=True,
                           reason="missing_verdict", source="auto",
                           evidence=env.evidence(hit, state.sub_question))
            continue
        rationale, cut = truncate(verdict.rationale, limit)
        evidence = env.evidence(hit, state.sub_question, verdict.quote)
        tally[verdict.verdict] += 1
        if verdict.verdict == "accept":
            state.accepted.append(AcceptedChunk(
                chunk_id=hit.chunk_id, document_key=hit.document_key,
                sub_corpus=hit.sub_corpus, rationale=rationale, source="agent",
                title=hit.title, date=hit.date, signals=verdict.signals, evidence=evidence))
            state.accepted_documents.add(hit.document_key)
            events.append(verdict_event(hit, "accept", rationale, source="agent",
                                        auto_held=False, rationale_truncated=cut,
                                        signals=verdict.signals, evidence=evidence))
        elif verdict.verdict == "reject":
            events.append(verdict_event(hit, "reject", rationale, source="agent",
                                        auto_held=False, rationale_truncated=cut,
                                        signals=verdict.signals, evidence=evidence))
        else:
            events += hold(state, hit, rationale, auto=False, reason="agent", source="agent",
                           signals=verdict.signals, evidence=evidence)
    state.pending = []
    notes = []
    if unknown:
        notes.append("ignored verdicts for chunks not pending: " + ", ".join(map(str, unknown)))
    if missing:
        notes.append("chunks without a verdict were held: " + ", ".join(map(str, missing)))
    if notes:
        message = "; ".join(notes)
        state.feedback.append(message)
        events.append(FeedbackGiven(reason="review_incomplete", message=message))
    log = f"review → {tally['accept']} accepted, {tally['reject']} rejected, {tally['hold']} held"
    return StepOutcome(True, log, events)


def _feedback(reason: str, message: str, *, log: str = "") -> StepOutcome:
    entry = f"{log} → skipped: {message}" if log else f"skipped: {message}"
    return StepOutcome(False, entry, [FeedbackGiven(reason=reason, message=message)])


def _execute(env: LoopEnv, state: LoopState, step: AgentStep) -> StepOutcome:
    if step.action == "search":
        return _search(env, state, step.args)
    if step.action == "review":
        return _review(env, state, step.args)
    state.last_attempt = None
    if state.pending:
        return _feedback("alternation_violation",
                         f"{len(state.pending)} chunks are pending: review them before finishing",
                         log="finish")
    return StepOutcome(False, "finish", [], finish="finish_action")


def _context(env: LoopEnv, state: LoopState) -> StepContext:
    window = env.config.action_log_window
    return StepContext(
        question=env.question, index=state.index, sub_question=state.sub_question,
        sub_corpora=env.sub_corpora, briefings=list(env.briefings), memory=state.memory,
        action_log=state.action_log[-window:] if window > 0 else [],
        feedback=list(state.feedback), pending=list(state.pending),
        accepted=list(state.accepted), held=list(state.held.items),
        searches=list(state.searches), effective_step=state.effective_steps,
        step_budget=env.config.step_budget)


def warm_start(env: LoopEnv, state: LoopState) -> None:
    """Seed the first pending batch from the retriever's fused warm start."""
    sq = state.sub_question
    sub_corpus = env.scope.sub_corpus or sq.target_sub_corpus
    target_date = sq.target_date if is_full_date(sq.target_date) else None
    query, cut = cap_query(sub_question_query(sq.text, env.sub_corpora),
                           env.config.query_max_chars)
    if cut is not None:
        env.recorder.emit(cut, sub_question_index=state.index)
    found = env.retriever.warm_start(SearchRequest(
        channel="warm_start", query=query, window=target_day(target_date),
        sub_corpora=(sub_corpus,) if sub_corpus else None, limit=env.config.warm_start_limit))
    found = [h for h in found if env.scope.admits(h)][: env.config.warm_start_limit]
    for hit in found:
        state.seen_chunks.add(hit.chunk_id)
        state.texts[hit.chunk_id] = hit.text
    state.pending = found
    state.action_log.append(f"warm start → {len(found)} chunks to review")
    env.recorder.emit(WarmStartRan(query=query, sub_corpus=sub_corpus, target_date=target_date,
                                   **describe(found)), sub_question_index=state.index)


def run_loop(env: LoopEnv, state: LoopState) -> str:
    """Drive the agent until finish, budget, a forced stop or cancellation; return the reason."""
    config, recorder = env.config, env.recorder
    reason = "budget"
    while True:
        if recorder.cancelled():
            reason = "cancelled"
            break
        if state.effective_steps >= config.step_budget:
            reason = "budget"
            break
        if state.raw_steps >= config.max_raw_steps:
            reason = "max_raw_steps"
            break
        state.raw_steps += 1
        ctx = _context(env, state)
        state.feedback = []
        def decide(calls: list[ModelCallSummary], ctx: StepContext = ctx) -> AgentStep:
            return env.policy.step(ctx, calls)

        try:
            step = recorder.invoke(state.index, decide)
            model_call_seq = recorder.last_model_call_seq
        except OutputParseError as exc:
            state.parse_failures += 1
            state.last_attempt = None
            message = f"your reply could not be used ({exc}); reply with one JSON object"
            state.feedback.append(message)
            state.action_log.append("skipped: unparsable reply")
            recorder.emit(FeedbackGiven(reason="parse_failure", message=message),
                          sub_question_index=state.index)
            if state.parse_failures >= config.max_consecutive_parse_failures:
                reason = "parse_failures"
                break
            continue
        state.parse_failures = 0
        state.memory = step.memory_update
        outcome = _execute(env, state, step)
        if outcome.productive:
            state.effective_steps += 1
        state.action_log.append(outcome.log)
        for event in outcome.events:
            if isinstance(event, FeedbackGiven) and event.reason != "review_incomplete":
                state.feedback.append(event.message)
        recorder.emit(AgentStepTaken(
            thought=step.thought, action=step.action, args=step.recorded_args(),
            memory=state.memory,
            effective_step=state.effective_steps, raw_step=state.raw_steps,
            productive=outcome.productive), sub_question_index=state.index)
        for event in outcome.events:
            recorder.emit(decided_by_call(event, model_call_seq),
                          sub_question_index=state.index)
        if outcome.finish:
            reason = outcome.finish
            break
    for hit in state.pending:
        for event in hold(state, hit, phrase(env.language, "unreviewed"), auto=True,
                          reason="unreviewed", source="auto",
                          evidence=env.evidence(hit, state.sub_question)):
            recorder.emit(event, sub_question_index=state.index)
    state.pending = []
    return reason


def new_state(env: LoopEnv, index: int, sub_question: SubQuestionSpec) -> LoopState:
    """Create a fresh, unshared loop state for one sub-question."""
    state = LoopState(index=index, sub_question=sub_question,
                      held=HeldPool(env.config.held_pool_size))
    if env.briefings:
        state.memory = Memory(prior_findings=env.briefings[-1].summary)
    return state
