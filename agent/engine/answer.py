"""The cited answer: what a drafter reads (the accepted sources, numbered) and what it writes.

A drafter reads an `AnswerMaterial`: the question, the sub-questions in plan order, and the
accepted sources in force, each under the number the review page and the citation exports give
it, with the evidence passages its verdicts cite. It writes a `DraftedAnswer`: sections of
sentences, each sentence followed by the spans it cites (a source number, its document key and
offsets into the document). Two drafters exist: `answer_extractive.extractive_answer` (quotes
the evidence, no model) and `answer_llm.model_answer` (a chat model writes, the engine checks
every citation).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from agent.engine.policy import ModelCallSummary


class AnswerDrafter(StrEnum):
    """Say who wrote an answer: sentences quoted from the evidence, or a chat model."""

    EXTRACTIVE = "extractive"
    LLM = "llm"


DRAFTER_LABELS: dict[AnswerDrafter, str] = {
    AnswerDrafter.EXTRACTIVE: "Extractive answer: sentences quoted from the accepted sources",
    AnswerDrafter.LLM: ("Answer written by a language model from the accepted sources' evidence: "
                        "check each sentence against the passage it cites"),
}


@dataclass(frozen=True)
class EvidencePassage:
    """One passage an accepting verdict cites: offsets into the document and the text there.

    `text` is the document's text between `start` and `end` when it was stored as such; the
    extractive drafter then cites each quoted sentence by its own offsets, otherwise by the
    whole passage's.
    """

    start: int
    end: int
    text: str
    sub_question_index: int | None = None


@dataclass(frozen=True)
class AnswerSource:
    """An accepted source as a drafter sees it, under its number in the order in force."""

    number: int
    document_key: str
    title: str = ""
    date: str = ""
    passages: tuple[EvidencePassage, ...] = ()


@dataclass(frozen=True)
class AnswerMaterial:
    """Everything a drafter may use: the question, the plan, the accepted sources in force."""

    question: str
    sub_questions: Mapping[int, str]  # sub-question index -> text, in plan order
    sources: tuple[AnswerSource, ...]

    def source(self, number: int) -> AnswerSource | None:
        """Return the source under a number, if there is one."""
        return next((s for s in self.sources if s.number == number), None)


@dataclass(frozen=True)
class CitedSpan:
    """One citation: the source's number, its document key, and the cited character range."""

    number: int
    document_key: str
    start: int
    end: int

    def to_json(self) -> dict[str, Any]:
        return {"number": self.number, "document_key": self.document_key,
                "start": self.start, "end": self.end}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CitedSpan:
        return cls(number=int(data["number"]), document_key=str(data["document_key"]),
                   start=int(data["start"]), end=int(data["end"]))


@dataclass(frozen=True)
class AnswerSentence:
    """One sentence of the answer and the spans it rests on (never empty once drafted)."""

    text: str
    citations: tuple[CitedSpan, ...]

    def to_json(self) -> dict[str, Any]:
        return {"text": self.text, "citations": [c.to_json() for c in self.citations]}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> AnswerSentence:
        return cls(text=str(data["text"]),
                   citations=tuple(CitedSpan.from_json(c) for c in data.get("citations", ())))


@dataclass(frozen=True)
class AnswerSection:
    """Sentences under one heading (a sub-question's, or none for a model's answer)."""

    heading: str
    sentences: tuple[AnswerSentence, ...]

    def to_json(self) -> dict[str, Any]:
        return {"heading": self.heading, "sentences": [s.to_json() for s in self.sentences]}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> AnswerSection:
        return cls(heading=str(data.get("heading", "")),
                   sentences=tuple(AnswerSentence.from_json(s) for s in data.get("sentences", ())))


@dataclass(frozen=True)
class DraftedAnswer:
    """A drafter's answer: its sections, how many sentences it dropped, its model calls."""

    drafter: AnswerDrafter
    sections: tuple[AnswerSection, ...]
    dropped: int = 0  # sentences left out because they cited no accepted source's span
    model_calls: tuple[ModelCallSummary, ...] = field(default_factory=tuple)
    reply: str = ""  # the model's last reply as received ("" for the extractive drafter)

    @property
    def label(self) -> str:
        return DRAFTER_LABELS[self.drafter]

    @property
    def sentences(self) -> list[AnswerSentence]:
        return [sentence for section in self.sections for sentence in section.sentences]

    def sections_json(self) -> list[dict[str, Any]]:
        """Return the sections as stored (the sentences with their citations)."""
        return [section.to_json() for section in self.sections]


def sections_from_json(data: list[Mapping[str, Any]]) -> tuple[AnswerSection, ...]:
    """Read stored sections back as typed sections."""
    return tuple(AnswerSection.from_json(section) for section in data)


def dropped_line(dropped: int) -> str:
    """Say how many sentences were left out and why ("" when none was)."""
    if not dropped:
        return ""
    noun = "sentence" if dropped == 1 else "sentences"
    verb = "it" if dropped == 1 else "they"
    return f"{dropped} {noun} dropped: {verb} cited no accepted source."
