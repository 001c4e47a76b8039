"""Plan and replan: validate what a policy proposes against the archive and the bounds."""

from __future__ import annotations

from agent.engine.config import EngineConfig
from agent.engine.events import PlanMade, PlanRevised
from agent.engine.plan_check import (
    KEPT_SHARE,
    according_to,
    kept_share,
    sub_question_key,
    well_formed,
)
from agent.engine.policy import PlanContext, Policy, ReplanContext
from agent.engine.recorder import Recorder
from agent.engine.retry import ask_with_retries
from agent.engine.schemas import Briefing, PlannedSubQuestion
from agent.engine.state import Scope
from agent.engine.types import SubQuestionSpec
from common.search import SubCorpusInfo
from common.text import casefold_without_accents

_DATE_SHAPES = (4, 7, 10)


def resolve_sub_corpus(value: str | None, infos: list[SubCorpusInfo]) -> str | None:
    """Map a slug or a sub-corpus name (any case, any accents) to a known slug."""
    if not value:
        return None
    wanted = casefold_without_accents(value).strip()
    for info in infos:
        if wanted in (casefold_without_accents(info.slug), casefold_without_accents(info.name)):
            return info.slug
    return None


def _valid_date(value: str | None) -> str | None:
    if not value:
        return None
    value = value.strip()
    if len(value) not in _DATE_SHAPES:
        return None
    parts = value.split("-")
    if not all(part.isdigit() for part in parts):
        return None
    return value


def sanitise(
    proposed: list[PlannedSubQuestion], infos: list[SubCorpusInfo], scope: Scope, limit: int
) -> tuple[list[SubQuestionSpec], list[str]]:
    """Turn proposals into sub-questions: known targets only, at most `limit`, notes on fixes."""
    result: list[SubQuestionSpec] = []
    notes: list[str] = []
    seen: set[tuple[str, ...]] = set()
    for position, item in enumerate(proposed):
        text = well_formed(item.text)
        if not text:
            notes.append(f"sub-question {position + 1} is empty and was dropped")
            continue
        if text != " ".join(item.text.split()):
            notes.append(f"sub-question {position + 1} reworded to be well formed")
        target = resolve_sub_corpus(item.target_sub_corpus, infos)
        if item.target_sub_corpus and target is None:
            notes.append(f"unknown target {item.target_sub_corpus!r} for sub-question "
                         f"{position + 1}: searching any sub-corpus")
        if scope.sub_corpus and target != scope.sub_corpus:
            target = scope.sub_corpus
        target_date = _valid_date(item.target_date)
        if item.target_date and target_date is None:
            notes.append(f"unreadable target_date {item.target_date!r} ignored")
        entities = tuple(dict.fromkeys(e.strip() for e in item.entities if e.strip()))
        if sub_question_key(text) in seen:
            info = next((i for i in infos if i.slug == target), None)
            if info is None or sub_question_key(according_to(info, text)) in seen:
                notes.append(f"sub-question {position + 1} repeats another and was dropped")
                continue
            text = according_to(info, text)
            notes.append(f"sub-question {position + 1} repeats another: it now names its source")
        seen.add(sub_question_key(text))
        result.append(SubQuestionSpec(text, target, entities, target_date))
    if len(result) > limit:
        notes.append(f"{len(result) - limit} sub-question(s) beyond the limit of {limit} dropped")
        result = result[:limit]
    return result, notes


def make_plan(
    *, question: str, policy: Policy, recorder: Recorder, config: EngineConfig,
    infos: list[SubCorpusInfo], scope: Scope,
) -> list[SubQuestionSpec]:
    """Ask the policy for a plan, retrying parse failures, and fall back to q itself."""
    ctx = PlanContext(question=question, sub_corpora=infos, m_max=config.m_max,
                      sub_corpus=scope.sub_corpus, date_from=scope.date_from,
                      date_to=scope.date_to)
    output = ask_with_retries(recorder, None, "plan", config.planner_attempts,
                              lambda calls: policy.plan(ctx, calls)).value
    plan: list[SubQuestionSpec] = []
    notes: list[str] = []
    if output is not None:
        plan, notes = sanitise(output.sub_questions, infos, scope, config.m_max)
    fallback = not plan
    if fallback:
        notes.append("no usable plan: the question itself is the only sub-question")
        plan = [SubQuestionSpec(well_formed(question) or question, scope.sub_corpus)]
    elif kept_share(question, [sq.text for sq in plan]) < KEPT_SHARE:
        notes.append("the plan leaves out some words of the question")
    recorder.emit(PlanMade(sub_questions=tuple(plan), notes=tuple(notes), fallback=fallback,
                           policy=policy.name))
    return plan


def replan(
    *, question: str, policy: Policy, recorder: Recorder, config: EngineConfig,
    infos: list[SubCorpusInfo], scope: Scope, done: list[SubQuestionSpec],
    accepted_counts: list[int],
    briefing: Briefing, remaining: list[SubQuestionSpec], index: int,
) -> list[SubQuestionSpec]:
    """Let the policy revise the remaining plan; the total never exceeds m_max."""
    ctx = ReplanContext(question=question, sub_corpora=infos, done=list(done),
                        accepted_counts=list(accepted_counts), briefing=briefing,
                        remaining=list(remaining), m_max=config.m_max)
    output = ask_with_retries(recorder, index, "replan", config.stage_attempts,
                              lambda calls: policy.replan(ctx, calls)).value
    notes: list[str] = []
    new_remaining = list(remaining)
    changed = False
    if output is None:
        notes.append("replanner unusable: plan kept")
    elif output.remaining is not None:
        room = max(0, config.m_max - len(done))
        proposed, notes = sanitise(output.remaining, infos, scope, room)
        if not proposed and remaining:
            notes.append("an empty revision would drop every remaining sub-question: plan kept")
        else:
            new_remaining = proposed
            changed = new_remaining != list(remaining)
    recorder.emit(PlanRevised(before=tuple(remaining), after=tuple(new_remaining),
                              changed=changed, notes=tuple(notes),
                              rationale=output.rationale if output is not None else ""),
                  sub_question_index=index)
    return new_remaining
