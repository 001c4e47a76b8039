"""Split French OCR text into sentences: the one splitter of chunking, evidence and quotes.

A sentence ends at . ! ? … (closing quotes and brackets allowed) before a blank; a blank line
ends one too (headings and paragraphs carry no punctuation). A period after an abbreviation
("M. Ricard", "MM. Ferry", "art. 3") or an initial ("J. Ferry") ends nothing.

Debate OCR often glues sentence punctuation to the next word ("la parole.M. le président"):
with ``split_glued=True`` a period, ``!`` or ``?`` directly followed by an upper-case letter
ends a sentence too.

Two rule sets, because they differ measurably: ``OCR_TEXT`` (chunk boundaries and quotes) and
``CAPITAL_AFTER`` (verdict evidence), where an end must also be followed by a capital, a digit,
a dash or an opening quote. They split most of the demo corpus's chunks differently, and the
evidence figures of `docs/evidence-measurement.md` were measured with the second.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

_UPPER = "A-ZÀÂÄÇÉÈÊËÎÏÔÖÙÛÜŸÆŒ"
# Sentence punctuation (plus closing quotes/brackets), then whitespace before the next sentence.
_SPACED_END = re.compile(r"[.!?…]+[\"'»”)\]]*(?=\s)")
# Sentence punctuation glued to an upper-case letter: "parole.M. le président".
_GLUED_END = re.compile(rf"[.!?]+(?=[{_UPPER}])")
_PARAGRAPH = re.compile(r"\n\s*\n")
# Words after which a period does not end a sentence ("M. Ricard", "MM. Ferry", "art. 3").
ABBREVIATIONS = frozenset({
    "m", "mm", "mme", "mmes", "mlle", "mlles", "me", "dr", "st", "ste", "art", "cf", "no",
    "n°", "etc", "p", "pp", "t", "vol", "chap", "av", "mgr", "gén", "gal", "cap", "col",
})
_WORD_BEFORE = re.compile(r"([\wÀ-ÿ°]+)$")


def _is_abbreviation(text: str, dot: int) -> bool:
    match = _WORD_BEFORE.search(text, max(0, dot - 12), dot)
    if not match:
        return False
    word = match.group(1)
    return word.lower() in ABBREVIATIONS or (len(word) == 1 and word.isupper())


def _period_after_abbreviation(text: str, end: re.Match[str]) -> bool:
    return end.group(0).startswith(".") and _is_abbreviation(text, end.start())


# An end followed by a blank, then a capital, a digit, a dash or an opening quote.
_END_BEFORE_CAPITAL = re.compile(
    r"[.!?…]+(?:\s?[»\"')\]])*(?=\s+[«\"(—–-]?\s*[A-ZÀ-ÖØ-Þ0-9])")
_SHORT_WORD_BEFORE = re.compile(
    r"(?:\b(?:MM?|Mme|Mlle|Mgr|St|Ste|art|Art|cf|etc|No|no|p)|\b[A-Z])$")


def _after_short_abbreviation(text: str, end: re.Match[str]) -> bool:
    return _SHORT_WORD_BEFORE.search(text, max(0, end.start() - 6), end.start()) is not None


@dataclass(frozen=True)
class SentenceRules:
    """Where a sentence may end, and which ends an abbreviation cancels."""

    end: re.Pattern[str]
    glued_end: re.Pattern[str] | None
    not_an_end: Callable[[str, re.Match[str]], bool]


OCR_TEXT = SentenceRules(_SPACED_END, _GLUED_END, _period_after_abbreviation)
CAPITAL_AFTER = SentenceRules(_END_BEFORE_CAPITAL, None, _after_short_abbreviation)


def sentence_spans(text: str, *, split_glued: bool = True,
                   rules: SentenceRules = OCR_TEXT) -> list[tuple[int, int]]:
    """Return (start, end) spans of the sentences of ``text``, stripped of surrounding space."""
    cuts: set[int] = set()
    patterns = [rules.end]
    if split_glued and rules.glued_end is not None:
        patterns.append(rules.glued_end)
    for pattern in patterns:
        for match in pattern.finditer(text):
            if not rules.not_an_end(text, match):
                cuts.add(match.end())
    for match in _PARAGRAPH.finditer(text):
        cuts.add(match.start())
    spans = []
    start = 0
    for cut in sorted(cuts | {len(text)}):
        piece = text[start:cut]
        stripped = piece.strip()
        if stripped:
            offset = start + (len(piece) - len(piece.lstrip()))
            spans.append((offset, offset + len(stripped)))
        start = cut
    return spans
