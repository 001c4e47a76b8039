"""Value types shared by the engine, its ports and its policies.

Retrieval speaks `common.search` (SearchRequest down, Hit back up); a hit's `document_key` is the
document's archive key ("sub_corpus:external_id"), the only document identifier the engine uses.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from pydantic import ConfigDict

from common.search import Hit
from common.usage import TokenUsage


@dataclass(frozen=True)
class ChatResult:
    """Carry one model completion and its usage."""

    text: str
    model: str
    usage: TokenUsage = TokenUsage()
    seconds: float = 0.0


@dataclass(frozen=True)
class SubQuestionSpec:
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

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SubQuestionSpec:
        """Rebuild a sub-question from its JSON view."""
        return cls(text=data["text"], target_sub_corpus=data.get("target_sub_corpus"),
                   entities=tuple(data.get("entities") or ()),
                   target_date=data.get("target_date"))


@dataclass(frozen=True)
class Memory:
    """Hold the five memory slots, replaced wholesale at every step (a reply rewrites all five).

    The same type is what the policy writes (`AgentStep.memory_update`, validated strictly: an
    unknown slot is refused) and what the loop keeps and records.
    """

    __pydantic_config__: ClassVar[ConfigDict] = ConfigDict(extra="forbid")

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
class EvidenceSpan:
    """Locate a verdict's evidence: character offsets into the document's text, and that text.

    `method` says how it was found: "exact" or "fuzzy" (the policy's quote, located in the
    chunk) or "sentences" (the chunk's sentences that carry most of the question's terms).
    """

    start: int
    end: int
    text: str = ""
    method: str = ""


@dataclass(frozen=True)
class VerdictSignals:
    """The figures a verdict was decided on, kept as data beside its rationale.

    Anything that ranks or re-evaluates reads these fields, never the rationale text, so
    rewording a rationale cannot change a decision. `found_by` is "warm_start" or the channel
    of the search that brought the chunk; `batch_rank` is its position in that batch (from 1).
    The evidence passage travels beside the signals, on the verdict itself.
    """

    query_terms: int
    matched_terms: tuple[str, ...]
    found_by: str
    batch_rank: int
    score: float = 0.0
    channel_ranks: Mapping[str, int] = field(default_factory=dict)
    # The chunk's words for matched_terms, one each, exactly as printed (OCR form included).
    matched_forms: tuple[str, ...] = ()
    # Most question terms that one sentence and one passage (up to three sentences) hold.
    sentence_terms: int = 0
    passage_terms: int = 0
    names_found: int = 0  # the sub-question's named people or places the chunk holds
    date_agrees: bool = False  # dated on or just after the day (or in the month) asked
    # The learnt judge's probability that the chunk's document answers the question (None
    # when the rules decided).
    probability: float | None = None

    @property
    def share(self) -> float:
        """Return the share of the question's terms found in the chunk."""
        return len(self.matched_terms) / self.query_terms if self.query_terms else 0.0

    @property
    def from_warm_start(self) -> bool:
        """Tell whether the fused warm start, rather than a single channel, found the chunk."""
        return self.found_by == WARM_START

    def strength(self) -> tuple[int, int, int, int, int]:
        """Order verdicts by what they say of the chunk's topic, strongest first when sorted.

        Named people, then question terms met in one passage and in one sentence, then where
        it was found (the fused warm start before a single channel) and its rank there.
        """
        return (-self.names_found, -self.passage_terms, -self.sentence_terms,
                0 if self.from_warm_start else 1, self.batch_rank)


WARM_START = "warm_start"


@dataclass(frozen=True)
class AcceptedChunk:
    """Record one accepted chunk with the rationale (and the figures) that justified it."""

    chunk_id: int
    document_key: str
    sub_corpus: str
    rationale: str
    source: str  # "agent" | "held_reeval"
    title: str = ""
    date: str | None = None
    signals: VerdictSignals | None = None
    evidence: EvidenceSpan | None = None


@dataclass(frozen=True)
class HeldChunk:
    """Record one held chunk waiting for re-evaluation."""

    hit: Hit
    rationale: str
    auto_held: bool
    order: int  # arrival order inside the sub-question, for stable tie-breaking
    signals: VerdictSignals | None = None
    evidence: EvidenceSpan | None = None


@dataclass
class Counters:
    """Accumulate model usage and timing for one investigation."""

    llm_calls: int = 0
    usage: TokenUsage = TokenUsage()
    model_seconds: float = 0.0
    engine_seconds: float = 0.0


@dataclass
class InvestigationResult:
    """Return the ranked sources (document keys) and the evidence behind them."""

    question: str
    status: str  # "finished" | "cancelled"
    ranked_document_keys: list[str]
    accepted: dict[int, list[AcceptedChunk]]
    held_document_keys: list[str]
    sub_questions: list[SubQuestionSpec]
    finish_reasons: dict[int, str]
    counters: Counters
    policy: str = ""
