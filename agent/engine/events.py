"""The event catalogue: one frozen dataclass per kind of event an investigation emits.

Every event carries its envelope, `seq` (its position in the run, from 1) and `sub_question_index`
(the index of the sub-question it belongs to, None for the investigation as a whole), both
stamped by the Recorder. `to_json()` gives a JSON-ready dict with the kind; `event_from_json`
turns such a dict back into its typed event. Reading ignores keys a kind does not know and
fills fields added later with their defaults, so events stored by older runs stay readable.
A `usage` field (a TokenUsage) is stored as its three flat counts, `input_tokens`,
`output_tokens` and `cached_tokens`, the shape events had before the usage had a type.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar

from agent.engine.types import EvidenceSpan, Memory, SubQuestionSpec, VerdictSignals
from common.usage import TokenUsage

ENVELOPE = ("kind", "seq", "sub_question_index")
USAGE = "usage"  # the field stored as flat token counts


def _plain(value: Any) -> Any:
    """Turn a field value into JSON-ready data (dataclasses to dicts, tuples to lists)."""
    if hasattr(value, "__dataclass_fields__"):
        return {f.name: _plain(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    if isinstance(value, Mapping):
        return {key: _plain(item) for key, item in value.items()}
    return value


_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def _field_names(kind: type) -> tuple[str, ...]:
    names = _FIELD_NAMES.get(kind)
    if names is None:
        names = _FIELD_NAMES[kind] = tuple(f.name for f in fields(kind))
    return names


@dataclass(frozen=True, kw_only=True)
class Event:
    """Base of every event: the envelope, and the JSON conversion shared by all kinds."""

    kind: ClassVar[str] = ""
    # Nested values rebuilt from JSON, by field name.
    decoders: ClassVar[Mapping[str, Callable[[Any], Any]]] = {}

    seq: int = 0
    sub_question_index: int | None = None

    def __post_init__(self) -> None:
        # Sequences are stored as tuples, so equal events compare equal after a JSON round trip.
        for name in _field_names(type(self)):
            value = getattr(self, name)
            if isinstance(value, list):
                object.__setattr__(self, name, tuple(value))

    def payload(self) -> dict[str, Any]:
        """Return the event's own fields as JSON-ready data, without the envelope."""
        data: dict[str, Any] = {}
        for name in _field_names(type(self)):
            if name == USAGE:
                data.update(getattr(self, name).as_fields())
            elif name not in ENVELOPE:
                data[name] = _plain(getattr(self, name))
        return data

    def to_json(self) -> dict[str, Any]:
        """Return the whole event, envelope and kind included, as JSON-ready data."""
        return {"kind": self.kind, "seq": self.seq, "sub_question_index": self.sub_question_index,
                **self.payload()}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Event:
        """Rebuild an event of this kind from `to_json()` output (unknown keys are ignored)."""
        values: dict[str, Any] = {}
        for name in _field_names(cls):
            if name == USAGE:
                values[name] = TokenUsage.from_fields(data)
            elif name in data:
                value = data[name]
                decode = cls.decoders.get(name)
                values[name] = decode(value) if decode and value is not None else value
        return cls(**values)

    def stamped(self, seq: int, sub_question_index: int | None) -> Event:
        """Return a copy of the event with its envelope filled in."""
        event = copy.copy(self)
        object.__setattr__(event, "seq", seq)
        object.__setattr__(event, "sub_question_index", sub_question_index)
        return event


def _sub_questions(items: list[Mapping[str, Any]]) -> tuple[SubQuestionSpec, ...]:
    return tuple(SubQuestionSpec.from_dict(item) for item in items)


def _signals(data: Mapping[str, Any]) -> VerdictSignals:
    return VerdictSignals(
        query_terms=data["query_terms"], matched_terms=tuple(data["matched_terms"]),
        found_by=data["found_by"], batch_rank=data["batch_rank"], score=data.get("score", 0.0),
        channel_ranks=dict(data.get("channel_ranks") or {}),
        matched_forms=tuple(data.get("matched_forms") or ()),
        sentence_terms=data.get("sentence_terms", 0), passage_terms=data.get("passage_terms", 0),
        names_found=data.get("names_found", 0), date_agrees=data.get("date_agrees", False),
        probability=data.get("probability"))


def _evidence(data: Mapping[str, Any]) -> EvidenceSpan:
    return EvidenceSpan(start=data["start"], end=data["end"], text=data.get("text", ""),
                        method=data.get("method", ""))


# -- the investigation --------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class InvestigationStarted(Event):
    """The run began: the question, who decides, the scope asked for and the engine settings."""

    kind: ClassVar[str] = "start"

    question: str
    policy: str
    sub_corpus: str | None = None
    date_from: str | None = None
    date_to: str | None = None
    notes: tuple[str, ...] = ()
    sub_corpora: tuple[str, ...] = ()
    config: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class PlanMade(Event):
    """The sub-questions the run starts with, and the fixes made to the policy's proposal."""

    kind: ClassVar[str] = "plan"
    decoders: ClassVar[Mapping[str, Callable[[Any], Any]]] = {"sub_questions": _sub_questions}

    sub_questions: tuple[SubQuestionSpec, ...]
    notes: tuple[str, ...] = ()
    fallback: bool = False
    policy: str = ""


@dataclass(frozen=True, kw_only=True)
class PlanRevised(Event):
    """The remaining plan before and after a replan (`changed` is False when it was kept)."""

    kind: ClassVar[str] = "replan"
    decoders: ClassVar[Mapping[str, Callable[[Any], Any]]] = {
        "before": _sub_questions, "after": _sub_questions}

    before: tuple[SubQuestionSpec, ...]
    after: tuple[SubQuestionSpec, ...]
    changed: bool = False
    notes: tuple[str, ...] = ()
    rationale: str = ""


@dataclass(frozen=True, kw_only=True)
class RankGroup:
    """One group of the final ranking: documents accepted by `count` sub-questions, in order."""

    count: int
    documents: tuple[str, ...]
    llm: bool = False  # whether the policy was asked to order the group
    notes: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "documents", tuple(self.documents))


@dataclass(frozen=True, kw_only=True)
class RankingMade(Event):
    """The final order of the accepted documents, and the held ones never promoted."""

    kind: ClassVar[str] = "rank"
    decoders: ClassVar[Mapping[str, Callable[[Any], Any]]] = {
        "groups": lambda items: tuple(RankGroup(**item) for item in items)}

    groups: tuple[RankGroup, ...]
    ranked: tuple[str, ...]
    held_documents: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True)
class InvestigationFinished(Event):
    """The run ended (finished or cancelled), with its totals."""

    kind: ClassVar[str] = "finish"

    status: str
    reason: str
    ranked: int = 0
    sub_questions: int = 0
    llm_calls: int = 0
    usage: TokenUsage = TokenUsage()
    model_seconds: float = 0.0
    engine_seconds: float = 0.0


# -- one sub-question ---------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class SubQuestionStarted(Event):
    """A sub-question begins."""

    kind: ClassVar[str] = "subquestion_start"

    text: str
    target_sub_corpus: str | None = None
    entities: tuple[str, ...] = ()
    target_date: str | None = None

    @property
    def sub_question(self) -> SubQuestionSpec:
        """Return the sub-question itself."""
        return SubQuestionSpec(self.text, self.target_sub_corpus, self.entities, self.target_date)


@dataclass(frozen=True, kw_only=True)
class WarmStartRan(Event):
    """The fused warm start seeded the first batch; found chunks in retrieval order."""

    kind: ClassVar[str] = "warm_start"

    query: str
    sub_corpus: str | None = None
    target_date: str | None = None
    chunk_ids: tuple[int, ...] = ()
    document_keys: tuple[str, ...] = ()
    channel_ranks: tuple[Mapping[str, int], ...] = ()


@dataclass(frozen=True, kw_only=True)
class SearchRan(Event):
    """One channel search: what the agent asked, what was run, what came back.

    `asked_date_*` are the agent's dates, `date_*` the window actually searched (widened for the
    temporal channel, or the investigation's dates); `shown_chunk_ids` are the found chunks
    inside the asked window, the ones given to the agent to review.
    """

    kind: ClassVar[str] = "search"

    channel: str
    query: str = ""
    asked_date_from: str | None = None
    asked_date_to: str | None = None
    date_from: str | None = None
    date_to: str | None = None
    sub_corpus: str | None = None
    sub_corpus_forced: bool = False
    excluded_chunks: int = 0
    excluded_documents: int = 0
    chunk_ids: tuple[int, ...] = ()
    document_keys: tuple[str, ...] = ()
    channel_ranks: tuple[Mapping[str, int], ...] = ()
    shown_chunk_ids: tuple[int, ...] = ()


@dataclass(frozen=True, kw_only=True)
class AgentStepTaken(Event):
    """One decision of the agent: its thought, its action, and the memory it wrote."""

    kind: ClassVar[str] = "step"
    decoders: ClassVar[Mapping[str, Callable[[Any], Any]]] = {
        "memory": lambda data: Memory(**data)}

    thought: str
    action: str
    args: Mapping[str, Any] = field(default_factory=dict)
    memory: Memory = field(default_factory=Memory)
    effective_step: int = 0
    raw_step: int = 0
    productive: bool = False


@dataclass(frozen=True, kw_only=True)
class VerdictGiven(Event):
    """A verdict on one chunk: by the agent, automatically, or at held re-evaluation.

    `reason` says why a chunk was held without the agent deciding so (widened_window,
    missing_verdict, unreviewed; "agent" for an agent's hold); `signals` holds the figures the
    verdict was decided on, when the policy states them; `evidence` is the passage (one to three
    sentences, offsets into the document) the verdict rests on. `model_call_seq` is the `seq` of
    the `llm_call` event whose reply gave a model-decided verdict (None for rules and historians).
    """

    kind: ClassVar[str] = "verdict"
    decoders: ClassVar[Mapping[str, Callable[[Any], Any]]] = {
        "signals": _signals, "evidence": _evidence}

    chunk_id: int
    document_key: str
    sub_corpus: str
    verdict: str  # accept | reject | hold
    rationale: str = ""
    auto_held: bool = False
    source: str = "agent"  # agent | auto | held_reeval
    reason: str | None = None
    rationale_truncated: bool = False
    signals: VerdictSignals | None = None
    evidence: EvidenceSpan | None = None
    model_call_seq: int | None = None


@dataclass(frozen=True, kw_only=True)
class HeldChunkDropped(Event):
    """The held pool was full: this chunk left it to make room."""

    kind: ClassVar[str] = "held_drop"

    chunk_id: int
    document_key: str
    auto_held: bool
    pool_size: int


@dataclass(frozen=True, kw_only=True)
class FeedbackGiven(Event):
    """An action or a reply could not be used; the message is what the agent is told."""

    kind: ClassVar[str] = "feedback"

    reason: str
    message: str
    stage: str | None = None
    attempt: int | None = None


@dataclass(frozen=True, kw_only=True)
class HeldReevaluated(Event):
    """Held chunks were re-evaluated when the sub-question closed."""

    kind: ClassVar[str] = "held_reeval"

    promoted: tuple[int, ...] = ()
    kept: tuple[int, ...] = ()
    ignored: tuple[int, ...] = ()
    rationale: str = ""


@dataclass(frozen=True, kw_only=True)
class BriefingWritten(Event):
    """What a finished sub-question established, handed to the next ones."""

    kind: ClassVar[str] = "briefing"

    summary: str = ""
    confirmed_facts: tuple[str, ...] = ()
    confirmed_dates: tuple[str, ...] = ()
    confirmed_entities: tuple[str, ...] = ()
    gaps: tuple[str, ...] = ()
    search_hints: tuple[str, ...] = ()
    fallback: bool = False


@dataclass(frozen=True, kw_only=True)
class SubQuestionFinished(Event):
    """A sub-question's loop ended, and why (finish_action, budget, cancelled...)."""

    kind: ClassVar[str] = "subquestion_finish"

    reason: str
    effective_steps: int = 0
    raw_steps: int = 0
    accepted: int = 0
    held: int = 0


# -- model calls and problems -------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class ModelCalled(Event):
    """One model call and its usage; the reply itself is kept by whoever pays for the call."""

    kind: ClassVar[str] = "llm_call"

    role: str
    prompt_name: str
    prompt_hash: str
    model: str = ""
    usage: TokenUsage = TokenUsage()
    seconds: float = 0.0


@dataclass(frozen=True, kw_only=True)
class StageFailed(Event):
    """A closing stage got no usable reply; `fallback` says a default was used instead."""

    kind: ClassVar[str] = "error"

    stage: str
    message: str
    fallback: bool = False


CATALOGUE: dict[str, type[Event]] = {
    kind.kind: kind
    for kind in (
        InvestigationStarted, PlanMade, PlanRevised, SubQuestionStarted, WarmStartRan, SearchRan,
        AgentStepTaken, VerdictGiven, HeldChunkDropped, FeedbackGiven, HeldReevaluated,
        BriefingWritten, SubQuestionFinished, RankingMade, InvestigationFinished, ModelCalled,
        StageFailed,
    )
}


def event_from_json(data: Mapping[str, Any]) -> Event:
    """Rebuild the typed event described by `data` (as `Event.to_json()` returns it)."""
    kind = data.get("kind")
    if kind not in CATALOGUE:
        raise ValueError(f"unknown event kind {kind!r}; known: {', '.join(sorted(CATALOGUE))}")
    return CATALOGUE[kind].from_json(data)
