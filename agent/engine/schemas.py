"""Define the structured outputs every policy decision must fit."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from agent.engine.types import VerdictSignals


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PlannedSubQuestion(_Strict):
    """Describe one sub-question proposed by a planner or replanner."""

    text: str = Field(min_length=1)
    target_sub_corpus: str | None = None
    entities: list[str] = Field(default_factory=list)
    target_date: str | None = None


class PlannerOutput(_Strict):
    """Decompose the question into sub-questions."""

    sub_questions: list[PlannedSubQuestion]


class MemoryUpdate(_Strict):
    """Replace all five memory slots."""

    prior_findings: str = ""
    question_analysis: str = ""
    evidence_gathered: str = ""
    gaps_remaining: str = ""
    next_steps: str = ""


class AgentStep(_Strict):
    """Choose one action for the next step."""

    thought: str = ""
    action: Literal["search", "review", "finish"]
    args: dict[str, Any] = Field(default_factory=dict)
    memory_update: MemoryUpdate = Field(default_factory=MemoryUpdate)


class ChunkDecision(_Strict):
    """Judge one pending chunk against the original question.

    `quote` copies the one to three sentences of the chunk the verdict rests on; the engine
    locates it in the chunk (tolerating OCR noise) to give the verdict its evidence.
    """

    chunk_id: int
    verdict: Literal["accept", "reject", "hold"]
    rationale: str = ""
    quote: str = ""
    signals: VerdictSignals | None = None  # the figures decided on, when the policy states them


class SearchArgs(_Strict):
    """Validate the arguments of a search action."""

    channel: Literal["bm25", "dense", "temporal", "substring"]
    query: str = ""
    date_from: str | None = None
    date_to: str | None = None
    sub_corpus: str | None = None


class ReviewArgs(_Strict):
    """Validate the arguments of a review action."""

    verdicts: list[ChunkDecision]


class Briefing(_Strict):
    """Summarise what one sub-question established for the next ones."""

    summary: str = ""
    confirmed_facts: list[str] = Field(default_factory=list)
    confirmed_dates: list[str] = Field(default_factory=list)
    confirmed_entities: list[str] = Field(default_factory=list)
    gaps: list[str] = Field(default_factory=list)
    search_hints: list[str] = Field(default_factory=list)


class ReplanOutput(_Strict):
    """Keep the remaining plan (None) or replace it with an edited list."""

    remaining: list[PlannedSubQuestion] | None = None
    rationale: str = ""


class Promotion(_Strict):
    """Promote one held chunk to accepted."""

    chunk_id: int
    rationale: str = ""
    quote: str = ""  # the sentences now shown to matter; the held verdict's evidence otherwise
    signals: VerdictSignals | None = None  # the figures the promoted chunk ranks by, if any


class HeldReevalOutput(_Strict):
    """List the held chunks the accumulated evidence now supports."""

    promotions: list[Promotion] = Field(default_factory=list)
    rationale: str = ""


class RankOutput(_Strict):
    """Order the documents of one group, most useful first."""

    order: list[str]
