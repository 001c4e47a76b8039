"""Run a whole investigation: plan, per-sub-question loops, briefings, replanning, ranking."""

from __future__ import annotations

import time

from agent.engine.config import EngineConfig
from agent.engine.events import (
    InvestigationFinished,
    InvestigationStarted,
    SubQuestionFinished,
    SubQuestionStarted,
)
from agent.engine.loop import LoopEnv, new_state, run_loop, warm_start
from agent.engine.planner import make_plan, replan
from agent.engine.policy import Policy
from agent.engine.ports import EventSink, Retriever
from agent.engine.ranking import rank
from agent.engine.recorder import Recorder
from agent.engine.stages import reevaluate_held, write_briefing
from agent.engine.state import Scope
from agent.engine.types import AcceptedChunk, HeldChunk, InvestigationResult, SubQuestionSpec

DEFAULT_CONFIG = EngineConfig()


def run_investigation(
    question: str,
    *,
    policy: Policy,
    retriever: Retriever,
    sink: EventSink,
    config: EngineConfig = DEFAULT_CONFIG,
    sub_corpus: str | None = None,
    date_from: str | None = None,
    date_to: str | None = None,
) -> InvestigationResult:
    """Investigate one question and return ranked documents with their evidence."""
    started = time.perf_counter()
    recorder = Recorder(sink)
    infos = sorted(retriever.sub_corpora(), key=lambda info: info.slug)
    slugs = [info.slug for info in infos]
    scope_notes: list[str] = []
    if sub_corpus is not None and sub_corpus not in slugs:
        scope_notes.append(f"unknown sub-corpus {sub_corpus!r} ignored")
        sub_corpus = None
    scope = Scope(sub_corpus=sub_corpus, date_from=date_from, date_to=date_to)
    recorder.emit(InvestigationStarted(
        question=question, policy=policy.name, sub_corpus=sub_corpus, date_from=date_from,
        date_to=date_to, notes=tuple(scope_notes), sub_corpora=tuple(slugs),
        config=dict(vars(config))))
    env = LoopEnv(question=question, policy=policy, retriever=retriever, recorder=recorder,
                  config=config, scope=scope, slugs=slugs, sub_corpora=infos)
    status = "finished"
    plan: list[SubQuestionSpec] = []
    if recorder.cancelled():
        status = "cancelled"
    else:
        plan = make_plan(question=question, policy=policy, recorder=recorder, config=config,
                         infos=infos, scope=scope)
    done: list[SubQuestionSpec] = []
    accepted: list[list[AcceptedChunk]] = []
    held: list[list[HeldChunk]] = []
    reasons: dict[int, str] = {}
    remaining = list(plan)
    while remaining and status == "finished":
        index = len(done)
        if index > 0:
            remaining = replan(question=question, policy=policy, recorder=recorder,
                               config=config, infos=infos, scope=scope, done=done,
                               accepted_counts=[len(a) for a in accepted],
                               briefing=env.briefings[-1], remaining=remaining, index=index)
            if not remaining or recorder.cancelled():
                status = "cancelled" if remaining else status
                break
        sub_question = remaining.pop(0)
        recorder.emit(SubQuestionStarted(
            text=sub_question.text, target_sub_corpus=sub_question.target_sub_corpus,
            entities=sub_question.entities, target_date=sub_question.target_date),
            sub_question_index=index)
        state = new_state(env, index, sub_question)
        warm_start(env, state)
        reason = run_loop(env, state)
        if reason != "cancelled":
            reevaluate_held(env, state)
        recorder.emit(SubQuestionFinished(
            reason=reason, effective_steps=state.effective_steps, raw_steps=state.raw_steps,
            accepted=len(state.accepted), held=len(state.held.items)), sub_question_index=index)
        done.append(sub_question)
        accepted.append(list(state.accepted))
        held.append(list(state.held.items))
        reasons[index] = reason
        if reason == "cancelled":
            status = "cancelled"
            break
        env.briefings.append(write_briefing(env, state, reason))
    if status == "finished" and recorder.cancelled():
        status = "cancelled"
    # A cancelled investigation still ranks what it found, without further model calls.
    ranking = rank(question=question, accepted=accepted, held=held,
                   policy=policy if status == "finished" else None, recorder=recorder,
                   config=config)
    counters = recorder.counters
    counters.engine_seconds = max(0.0, time.perf_counter() - started - counters.model_seconds)
    recorder.emit(InvestigationFinished(
        status=status, reason="completed" if status == "finished" else "cancelled",
        ranked=len(ranking.document_keys), sub_questions=len(done), llm_calls=counters.llm_calls,
        usage=counters.usage, model_seconds=counters.model_seconds,
        engine_seconds=counters.engine_seconds))
    return InvestigationResult(
        question=question, status=status, ranked_document_keys=ranking.document_keys,
        accepted=dict(enumerate(accepted)), held_document_keys=ranking.held_document_keys,
        sub_questions=done, finish_reasons=reasons, counters=counters, policy=policy.name)
