"""Measure cited answers against reference answers: do the cited spans hold its key entities?

For each finished investigation of a batch whose question has a reference answer (the questions
file's `answer` column, matched by qid), the newest draft of the cited answer is read (or drafted
first, on request). A sentence counts when one of the spans it cites holds a key entity of the
reference answer; a question counts when any cited span of its answer holds one.

Key entities are read from the reference answer by rule: quoted phrases, names (runs of
capitalised words, "Le Gaulois", "M. Lejeune" as "Lejeune"; a capitalised function word alone,
"Le", "Cette", is none) and numbers with the word after them ("5 francs"). A span holds one when
the entity's words appear in it as whole words, case, accents and apostrophes aside; an OCR
misreading of the entity is a miss, so the figures are a lower bound.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from agent.engine.answer import AnswerSection
from agent.investigations import services
from agent.models import AnswerDraft, Investigation
from agent.review import services as review_services
from agent.review.cited_answer import latest_draft
from archive.selectors import documents_by_keys
from common.text import casefold_without_accents

_QUOTED = re.compile(r"(?<!\w)[«“\"'‘]\s*([^«»“”\"'‘’]{3,80}?)\s*[»”\"'’](?!\w)")
_WORD = re.compile(r"[^\W\d_][\w'’-]*|\d[\d.,]*")
_PARTICLES = frozenset({"de", "du", "d'", "des", "la", "le", "l'"})
# Capitalised words that start a sentence, or stand before a name, without naming anything.
_FUNCTION_WORD_TEXT = (
    "le la les l' un une des ce cet cette ces il ils elle elles on en dans pour par sur avec "
    "sans selon entre quant tandis alors ainsi mais et ou donc car puis aussi pourtant "
    "cependant lequel laquelle lesquels lesquelles quel quelle quels quelles qui que quoi ni "
    "oui non son sa ses leur leurs au aux du de d' à a après avant depuis lors "
    "m mm mme mlle mgr")
_FUNCTION_WORDS = frozenset(casefold_without_accents(w) for w in _FUNCTION_WORD_TEXT.split())
_SENTENCE_END = tuple(".!?;:→—–(")
_CIVILITY = re.compile(r"(?:^|\W)(?:MM?|Mmes?|Mlles?|Mgr|[A-Z])\.$")  # "M." ends no sentence
_ELIDED_NAME = re.compile(r"^[LD]['’][A-ZÀ-Ý]")  # "L'Intransigeant"
_UNIT_AFTER = re.compile(r"(\d[\d.,]*)\s+([^\W\d_]+)")


def key_entities(reference: str) -> list[str]:
    """Return the reference answer's key entities, folded, longest first, each once."""
    text = reference.replace("’", "'")
    found = [match.group(1) for match in _QUOTED.finditer(text)]
    found += [f"{number} {unit}" for number, unit in _UNIT_AFTER.findall(text)]
    found += _names(text)
    folded = {_fold(entity) for entity in found}
    return sorted((entity for entity in folded if entity), key=lambda e: (-len(e), e))


def _names(text: str) -> list[str]:
    """Return runs of capitalised words, particles inside ("Société des Agriculteurs de France").

    Leading function words and civilities go ("Le Gaulois" is "Gaulois", "M. Lejeune"
    "Lejeune"); a lone capitalised word opening a sentence is no name ("Critique", "Cette"),
    unless it is an elided one ("L'Intransigeant").
    """
    names: list[str] = []
    run: list[tuple[str, bool]] = []  # (word, opens a sentence)

    def close() -> None:
        while run and _fold(run[0][0]) in _FUNCTION_WORDS:
            run.pop(0)
        while run and _fold(run[-1][0]) in _PARTICLES:
            run.pop()
        if run and len("".join(word for word, _ in run)) >= 3:
            word, opens = run[0]
            if len(run) > 1 or not opens or _ELIDED_NAME.match(word):
                names.append(" ".join(word for word, _ in run))
        run.clear()

    for match in _WORD.finditer(text):
        word = match.group(0)
        before = text[:match.start()].rstrip()
        opens = not before or (before.endswith(_SENTENCE_END)
                               and not _CIVILITY.search(before[-6:]))
        if word[0].isupper():
            if opens and run:
                close()
            run.append((word, opens))
        elif run and _fold(word) in _PARTICLES:
            run.append((word, False))
        else:
            close()
    close()
    return names


def _fold(text: str) -> str:
    words = _WORD.findall(casefold_without_accents(text.replace("’", "'")))
    return " ".join(words)


def holds_entity(span_text: str, entities: list[str]) -> bool:
    """Tell whether the span prints one of the entities as whole words."""
    folded = f" {_fold(span_text)} "
    return any(f" {entity} " in folded for entity in entities)


@dataclass
class AnswerScore:
    """One question's answer against its reference: sentences, and those whose span holds one."""

    qid: str
    question_type: str
    entities: list[str]
    sentences: int = 0
    sentences_holding: int = 0
    drafted: bool = True  # False: no draft could be made (no accepted source)

    @property
    def holds_any(self) -> bool:
        return self.sentences_holding > 0


def score_answer(qid: str, question_type: str, reference: str,
                 sections: tuple[AnswerSection, ...], document_texts: dict[str, str]
                 ) -> AnswerScore:
    """Score one answer's sentences by the spans they cite."""
    score = AnswerScore(qid, question_type, key_entities(reference))
    for section in sections:
        for sentence in section.sentences:
            score.sentences += 1
            spans = [document_texts.get(c.document_key, "")[c.start:c.end]
                     for c in sentence.citations]
            if any(holds_entity(span, score.entities) for span in spans):
                score.sentences_holding += 1
    return score


@dataclass
class AnswerReport:
    """The batch's figures: per question, and the two shares."""

    scores: list[AnswerScore] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # qids not measured, with why

    @property
    def sentences(self) -> int:
        return sum(score.sentences for score in self.scores)

    @property
    def sentence_share(self) -> float:
        """Share of answer sentences whose cited span holds a key entity of the reference."""
        holding = sum(score.sentences_holding for score in self.scores)
        return holding / self.sentences if self.sentences else 0.0

    @property
    def question_share(self) -> float:
        """Share of questions whose answer holds a key entity at all (no answer: holds none)."""
        return (sum(score.holds_any for score in self.scores) / len(self.scores)
                if self.scores else 0.0)


def measure_batch(investigations: list[Investigation], references: dict[str, tuple[str, str]],
                  *, draft_missing: bool = False) -> AnswerReport:
    """Score the newest draft of each finished investigation whose qid has a reference answer.

    `references` maps a qid to (question type, reference answer). With `draft_missing`, an
    investigation without a draft is drafted first (by its policy's drafter); one that cannot
    be (no accepted source) counts as an answer holding nothing; without `draft_missing` it is
    left out, as are runs not finished and questions without a reference answer.
    """

    report = AnswerReport()
    for investigation in investigations:
        name = investigation.qid or str(investigation.pk)
        if investigation.status != Investigation.Status.FINISHED:
            report.skipped.append(f"{name}: {investigation.status}")
            continue
        if investigation.qid not in references:
            report.skipped.append(f"{name}: no reference answer")
            continue
        question_type, reference = references[investigation.qid]
        draft: AnswerDraft | None = latest_draft(investigation)
        if draft is None and not draft_missing:
            report.skipped.append(f"{investigation.qid}: no draft (--draft-missing drafts one)")
            continue
        if draft is None:
            try:
                draft = review_services.answer_draft(investigation=investigation, user=None)
            except services.InvestigationError:
                draft = None  # no accepted source: the run gave no answer
        if draft is None:
            score = AnswerScore(investigation.qid, question_type, key_entities(reference),
                                drafted=False)
        else:
            keys = {c.document_key for section in draft.answer_sections
                    for sentence in section.sentences for c in sentence.citations}
            texts = {key: document.text for key, document in documents_by_keys(list(keys)).items()}
            score = score_answer(investigation.qid, question_type, reference,
                                 draft.answer_sections, texts)
        report.scores.append(score)
    return report
