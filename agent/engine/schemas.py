"""Define the structured outputs every policy decision must fit."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PlainValidator
from pydantic_core import PydanticKnownError

from agent.engine.types import Memory, VerdictSignals


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


Channel = Literal["bm25", "dense", "temporal", "substring"]


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

    channel: Channel
    query: str = ""
    date_from: str | None = None
    date_to: str | None = None
    sub_corpus: str | None = None


class ReviewArgs(_Strict):
    """Validate the arguments of a review action."""

    verdicts: list[ChunkDecision]


ActionArgs = dict[str, Any] | SearchArgs | ReviewArgs


def _action_args(value: object) -> ActionArgs:
    """Keep typed arguments as they are and a reply's JSON object as written; refuse the rest."""
    if isinstance(value, dict | SearchArgs | ReviewArgs):
        return value
    raise PydanticKnownError("dict_type")


class AgentStep(_Strict):
    """Choose one action for the next step.

    A policy that decides in code passes its arguments typed (`SearchArgs`, `ReviewArgs`); a
    model's reply keeps them as the JSON it wrote, which the loop checks against the action,
    so a bad argument becomes feedback to the model rather than an unusable reply.
    """

    thought: str = ""
    action: Literal["search", "review", "finish"]
    args: Annotated[ActionArgs, PlainValidator(_action_args)] = Field(default_factory=dict)
    memory_update: Memory = Field(default_factory=Memory)

    def recorded_args(self) -> dict[str, Any]:
        """Return the arguments as JSON-ready data, as the step's event records them."""
        if isinstance(self.args, BaseModel):
            return self.args.model_dump(mode="json")
        return self.args


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


class CitedEvidence(_Strict):
    """Name one evidence span of one numbered source: `<document source=N span=K>`."""

    source: int
    span: int = 1


class DraftedSentence(BaseModel):
    """One sentence of a model's answer with the evidence spans it rests on.

    Keys the schema does not name are ignored rather than refused: each sentence is checked on
    its own, and a sentence is worth keeping whatever else the model wrote beside it.
    """

    model_config = ConfigDict(extra="ignore")

    text: str = Field(min_length=1)
    citations: list[CitedEvidence] = Field(default_factory=list)


class AnswerOutput(BaseModel):
    """A model's cited answer: its sentences as written, each checked on its own afterwards."""

    model_config = ConfigDict(extra="ignore")

    sentences: list[Any]
