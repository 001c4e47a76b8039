"""Name the variables each prompt file sees: one explicit mapping per prompt, never reflection.

Renaming a context field must not silently rename (or drop) a prompt variable, so each prompt
lists its variables here by hand; `tests/engine/test_prompt_variables.py` checks that every
prompt renders from exactly these names under StrictUndefined.
"""

from __future__ import annotations

from typing import Any

from agent.engine.answer import AnswerMaterial
from agent.engine.policy import (
    BriefContext,
    HeldContext,
    PlanContext,
    RankContext,
    ReplanContext,
    StepContext,
)


def planner_variables(ctx: PlanContext) -> dict[str, Any]:
    """Return the variables of the planner prompt."""
    return {"question": ctx.question, "sub_corpora": ctx.sub_corpora, "m_max": ctx.m_max,
            "sub_corpus": ctx.sub_corpus, "date_from": ctx.date_from, "date_to": ctx.date_to}


def agent_variables(ctx: StepContext) -> dict[str, Any]:
    """Return the variables of the agent-step prompt."""
    return {"question": ctx.question, "index": ctx.index, "sub_question": ctx.sub_question,
            "sub_corpora": ctx.sub_corpora, "briefings": ctx.briefings, "memory": ctx.memory,
            "action_log": ctx.action_log, "feedback": ctx.feedback, "pending": ctx.pending,
            "accepted": ctx.accepted, "held": ctx.held, "effective_step": ctx.effective_step,
            "step_budget": ctx.step_budget}


def held_variables(ctx: HeldContext) -> dict[str, Any]:
    """Return the variables of the held re-evaluation prompt."""
    return {"question": ctx.question, "index": ctx.index, "sub_question": ctx.sub_question,
            "memory": ctx.memory, "accepted": ctx.accepted, "held": ctx.held}


def briefing_variables(ctx: BriefContext) -> dict[str, Any]:
    """Return the variables of the briefing prompt."""
    return {"question": ctx.question, "index": ctx.index, "sub_question": ctx.sub_question,
            "memory": ctx.memory, "accepted": ctx.accepted, "accepted_text": ctx.accepted_text,
            "held": ctx.held, "finish_reason": ctx.finish_reason}


def replan_variables(ctx: ReplanContext) -> dict[str, Any]:
    """Return the variables of the replanning prompt (the briefing as JSON-ready data)."""
    return {"question": ctx.question, "sub_corpora": ctx.sub_corpora, "done": ctx.done,
            "accepted_counts": ctx.accepted_counts, "briefing": ctx.briefing.model_dump(),
            "remaining": ctx.remaining, "m_max": ctx.m_max}


def rank_variables(ctx: RankContext) -> dict[str, Any]:
    """Return the variables of the ranking prompt."""
    return {"question": ctx.question, "count": ctx.count, "items": ctx.items}


def answer_variables(material: AnswerMaterial) -> dict[str, Any]:
    """Return the variables of the cited-answer prompt (sub-questions numbered from 1)."""
    return {"question": material.question,
            "sub_questions": [text for _, text in sorted(material.sub_questions.items())],
            "sources": material.sources}
