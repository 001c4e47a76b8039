"""Declare the decision points a policy implements and the views it decides on."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from agent.engine.schemas import (
    AgentStep,
    Briefing,
    HeldReevalOutput,
    PlannerOutput,
    RankOutput,
    ReplanOutput,
    SearchArgs,
)
from agent.engine.types import AcceptedChunk, HeldChunk, Memory, SubQuestionSpec, VerdictSignals
from common.search import Hit, SubCorpusInfo
from common.usage import TokenUsage


@dataclass(frozen=True)
class ModelCallSummary:
    """Record one model call a policy made, for its llm_call event and the usage counters."""

    role: str
    prompt_name: str
    prompt_hash: str
    model: str
    usage: TokenUsage
    seconds: float


@dataclass(frozen=True)
class PlanContext:
    """Show the planner the question and the archive's sub-corpora."""

    question: str
    sub_corpora: list[SubCorpusInfo]
    m_max: int
    sub_corpus: str | None = None
    date_from: str | None = None
    date_to: str | None = None


@dataclass(frozen=True)
class StepContext:
    """Show one agent step the state it may act on."""

    question: str
    index: int
    sub_question: SubQuestionSpec
    sub_corpora: list[SubCorpusInfo]
    briefings: list[Briefing]
    memory: Memory
    action_log: list[str]
    feedback: list[str]
    pending: list[Hit]
    accepted: list[AcceptedChunk]
    held: list[HeldChunk]
    searches: list[SearchArgs]  # the searches run so far, as the agent asked them
    effective_step: int
    step_budget: int


@dataclass(frozen=True)
class HeldContext:
    """Show held re-evaluation the accepted set, the memory and the held chunks."""

    question: str
    index: int
    sub_question: SubQuestionSpec
    memory: Memory
    accepted: list[AcceptedChunk]
    held: list[HeldChunk]


@dataclass(frozen=True)
class BriefContext:
    """Show the briefing writer what one sub-question established."""

    question: str
    index: int
    sub_question: SubQuestionSpec
    memory: Memory
    accepted: list[AcceptedChunk]
    accepted_text: dict[int, str]
    held: list[HeldChunk]
    finish_reason: str


@dataclass(frozen=True)
class ReplanContext:
    """Show the replanner the previous briefing and the remaining plan."""

    question: str
    sub_corpora: list[SubCorpusInfo]
    done: list[SubQuestionSpec]
    accepted_counts: list[int]
    briefing: Briefing
    remaining: list[SubQuestionSpec]
    m_max: int


@dataclass(frozen=True)
class RankItem:
    """Describe one accepted document by its rationales, never its full text."""

    document_key: str
    sub_corpus: str
    title: str
    date: str | None
    rationales: list[str]
    sub_questions: list[int]
    positions: list[int] = field(default_factory=list)  # acceptance order per sub-question
    signals: list[VerdictSignals] = field(default_factory=list)  # of the accepted chunks


@dataclass(frozen=True)
class RankContext:
    """Show the ranker one group of documents accepted by the same number of sub-questions."""

    question: str
    count: int
    items: list[RankItem]


class Policy(Protocol):
    """Decide; the engine enforces every invariant around the decisions."""

    name: str

    def plan(self, ctx: PlanContext, calls: list[ModelCallSummary]) -> PlannerOutput: ...

    def step(self, ctx: StepContext, calls: list[ModelCallSummary]) -> AgentStep: ...

    def reevaluate_held(
        self, ctx: HeldContext, calls: list[ModelCallSummary]
    ) -> HeldReevalOutput: ...

    def brief(self, ctx: BriefContext, calls: list[ModelCallSummary]) -> Briefing: ...

    def replan(self, ctx: ReplanContext, calls: list[ModelCallSummary]) -> ReplanOutput: ...

    def rank_group(self, ctx: RankContext, calls: list[ModelCallSummary]) -> RankOutput: ...
