"""Value types shared by the engine, its ports and its policies."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class SubCorpusInfo:
    """Describe one sub-corpus as the retriever knows it."""

    slug: str
    name: str
    genre: str
    description: str = ""


@dataclass(frozen=True)
class Candidate:
    """Hold one retrieved chunk; its text is untrusted OCR data."""

    chunk_id: int
    document_id: str
    sub_corpus: str
    title: str
    date: str | None
    text: str
    score: float
    channel_ranks: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class SearchRequest:
    """Describe one channel query; dates bound the temporal channel (and filter any channel)."""

    channel: str
    query: str = ""
    date_from: str | None = None
    date_to: str | None = None
    sub_corpus: str | None = None


@dataclass(frozen=True)
class ChatResult:
    """Carry one model completion and its usage."""

    text: str
    model: str
    input_tokens: int
    output_tokens: int
    cached_tokens: int = 0
    seconds: float = 0.0


@dataclass(frozen=True)
class Event:
    """Record one append-only engine event; payload is JSON-serialisable."""

    seq: int
    kind: str
    subquestion: int | None
    payload: dict[str, Any]


@dataclass(frozen=True)
class SubQuestion:
    """Hold one planned sub-question; target_date is "YYYY", "YYYY-MM" or "YYYY-MM-DD"."""

    text: str
    target_sub_corpus: str | None
    entities: tuple[str, ...] = ()
    target_date: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """Return a JSON-ready view."""
        return {
            "text": self.text,
            "target_sub_corpus": self.target_sub_corpus,
            "entities": list(self.entities),
            "target_date": self.target_date,
        }


@dataclass(frozen=True)
class Memory:
    """Hold the five memory slots, replaced wholesale at every step."""

    prior_findings: str = ""
    question_analysis: str = ""
    evidence_gathered: str = ""
    gaps_remaining: str = ""
    next_steps: str = ""

    def as_dict(self) -> dict[str, str]:
        """Return a JSON-ready view."""
        return {
            "prior_findings": self.prior_findings,
            "question_analysis": self.question_analysis,
            "evidence_gathered": self.evidence_gathered,
            "gaps_remaining": self.gaps_remaining,
            "next_steps": self.next_steps,
        }


@dataclass(frozen=True)
class AcceptedChunk:
    """Record one accepted chunk with the rationale that justified it."""

    chunk_id: int
    document_id: str
    sub_corpus: str
    rationale: str
    source: str  # "agent" | "held_reeval"
    title: str = ""
    date: str | None = None


@dataclass(frozen=True)
class HeldChunk:
    """Record one held chunk waiting for re-evaluation."""

    candidate: Candidate
    rationale: str
    auto_held: bool
    order: int  # arrival order inside the sub-question, for stable tie-breaking


@dataclass
class SubQuestionOutcome:
    """Summarise one finished sub-question loop."""

    index: int
    sub_question: SubQuestion
    accepted: list[AcceptedChunk]
    held: list[HeldChunk]
    finish_reason: str
    effective_steps: int
    raw_steps: int
    briefing: dict[str, Any] | None = None


@dataclass
class Counters:
    """Accumulate model usage and timing for one investigation."""

    llm_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    model_seconds: float = 0.0
    engine_seconds: float = 0.0

    def as_dict(self) -> dict[str, int | float]:
        """Return a JSON-ready view."""
        return {
            "llm_calls": self.llm_calls,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cached_tokens": self.cached_tokens,
            "model_seconds": self.model_seconds,
            "engine_seconds": self.engine_seconds,
        }


@dataclass
class InvestigationResult:
    """Return the ranked sources and the evidence behind them."""

    question: str
    status: str  # "finished" | "cancelled"
    ranked_documents: list[str]
    accepted: dict[int, list[AcceptedChunk]]
    held_documents: list[str]
    sub_questions: list[SubQuestion]
    finish_reasons: dict[int, str]
    counters: Counters
    policy: str = ""
