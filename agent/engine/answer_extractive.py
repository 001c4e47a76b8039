"""Draft a cited answer without a model: quote the accepted sources' evidence sentences.

One section per sub-question, in plan order, headed by the sub-question (the only words not
quoted from a source); under it the sentences of the evidence passages found for it, in the
order of the sources' numbers. Every source gets its first sentence in before any source gets a
second one; a sentence the answer already holds (the same, or nearly: OCR variants, a few words
more or less) is not repeated, its citation joins the one already there. Sentences are cut to a
readable length at a word.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from difflib import SequenceMatcher

from agent.engine.answer import (
    AnswerDrafter,
    AnswerMaterial,
    AnswerSection,
    AnswerSentence,
    AnswerSource,
    CitedSpan,
    DraftedAnswer,
    EvidencePassage,
)
from common.sentences import CAPITAL_AFTER, sentence_spans
from common.text import casefold_without_accents

SENTENCE_CHARS = 300  # longer sentences are cut at a word, with "…"
SECTION_SENTENCES = 6  # beyond every passage's first sentence
MIN_WORDS = 4  # shorter pieces (running heads, "CHAMBRE.") are quoted only when nothing else is
NEAR_DUPLICATE = 0.9  # similarity of the folded letters above which two sentences are one
OTHER_HEADING = "Other accepted sources"


@dataclass
class _Quote:
    text: str
    folded: str
    number: int  # the first source quoting it, for the order within a section
    position: int
    citations: list[CitedSpan] = field(default_factory=list)

    def cite(self, span: CitedSpan) -> None:
        if all((c.number, c.start, c.end) != (span.number, span.start, span.end)
               for c in self.citations):
            self.citations.append(span)
            self.citations.sort(key=lambda c: (c.number, c.start))


def extractive_answer(material: AnswerMaterial) -> DraftedAnswer:
    """Quote the evidence of the accepted sources, grouped by sub-question, each sentence cited."""
    quoted: list[_Quote] = []
    placed: list[tuple[str, list[_Quote]]] = []
    for index, heading in _headings(material):
        candidates = [(source, passage) for source in material.sources
                      for passage in source.passages if _section_of(material, passage) == index]
        kept = _section_quotes(candidates, quoted)
        if kept:
            placed.append((heading, sorted(kept, key=lambda q: (q.number, q.position))))
    # Built last: a later section's duplicate may still add a citation to an earlier sentence.
    sections = tuple(AnswerSection(heading, tuple(
        AnswerSentence(q.text, tuple(q.citations)) for q in kept)) for heading, kept in placed)
    return DraftedAnswer(AnswerDrafter.EXTRACTIVE, sections)


def _headings(material: AnswerMaterial) -> list[tuple[int | None, str]]:
    headings: list[tuple[int | None, str]] = [
        (index, f"Sub-question {position}: {' '.join(text.split())}")
        for position, (index, text) in enumerate(sorted(material.sub_questions.items()), start=1)]
    return [*headings, (None, OTHER_HEADING)]


def _section_of(material: AnswerMaterial, passage: EvidencePassage) -> int | None:
    index = passage.sub_question_index
    return index if index in material.sub_questions else None


def _section_quotes(candidates: list[tuple[AnswerSource, EvidencePassage]],
                    quoted: list[_Quote]) -> list[_Quote]:
    """Take each passage's first sentence, then second ones, ... up to the section's share."""
    pools = [_sentences(source, passage) for source, passage in candidates]
    kept: list[_Quote] = []
    budget = max(SECTION_SENTENCES, len(pools))
    rank = 0
    while len(kept) < budget and any(rank < len(pool) for pool in pools):
        for pool in pools:
            if rank >= len(pool) or len(kept) >= budget:
                continue
            candidate, span = pool[rank]
            twin = next((q for q in quoted if _near(q.folded, candidate.folded)), None)
            if twin is not None:
                twin.cite(span)
                continue
            candidate.cite(span)
            quoted.append(candidate)
            kept.append(candidate)
        rank += 1
    return kept


def _sentences(source: AnswerSource, passage: EvidencePassage) -> list[tuple[_Quote, CitedSpan]]:
    """Return the passage's sentences worth quoting, each with the span that cites it."""
    text = passage.text
    exact = len(text) == passage.end - passage.start  # the document's own characters
    spans = sentence_spans(text, rules=CAPITAL_AFTER) or [(0, len(text))]
    found = []
    for position, (a, b) in enumerate(spans):
        sentence = " ".join(text[a:b].split())
        if not sentence:
            continue
        start, end = (passage.start + a, passage.start + b) if exact else (passage.start,
                                                                           passage.end)
        span = CitedSpan(source.number, source.document_key, start, end)
        found.append((_Quote(_trimmed(sentence), _folded(sentence), source.number, position),
                      span))
    worded = [item for item in found if len(item[0].text.split()) >= MIN_WORDS]
    return worded or found[:1]


def _trimmed(sentence: str, limit: int = SENTENCE_CHARS) -> str:
    if len(sentence) <= limit:
        return sentence
    cut = sentence[:limit + 1].rfind(" ")
    return sentence[:cut if cut > limit // 2 else limit].rstrip(" ,;:") + " …"


def _folded(sentence: str) -> str:
    """Fold a sentence to its letters and digits: what two OCR copies of it share."""
    return "".join(ch for ch in casefold_without_accents(sentence) if ch.isalnum())


def _near(a: str, b: str) -> bool:
    """Tell two folded sentences apart, or not: equal, one inside the other, or nearly equal."""
    if a == b:
        return True
    shorter, longer = sorted((a, b), key=len)
    if len(shorter) >= 20 and shorter in longer and len(shorter) >= 0.8 * len(longer):
        return True
    return SequenceMatcher(None, a, b, autojunk=False).ratio() >= NEAR_DUPLICATE
