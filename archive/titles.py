"""Readable titles for debate sections: the sitting's date, the section heading or the speaker.

OCR'd debate sections start either with a printed heading in capitals ("SUITE DE LA
DISCUSSION DU PROJET DE LOI …") or straight with a speech ("M. Bourneville. Messieurs, …").
A section without a heading borrows the heading of its item's first section when it is known.
Pure functions: the importer and `manage.py retitle` share them (migration archive/0003 keeps a
frozen copy of the rules as they were).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

TITLE_MAX = 160
_HEADING_MAX = 110
# A section id: "<day>_<item>_<section>", sometimes with a sitting number after the day.
DEBATE_ID = re.compile(r"^(\d{4}-\d{2}-\d{2})(?:_(\d{1,2}))?_(\d+)_(\d+)$")
# The first speaker: "M. Achard.", "M. le baron de Mackau.", "MM. Méline et Mérillon."
# (optionally "M. Develle, ministre de l'agriculture." or "M. Durand (Ille-et-Vilaine).")
_SPEAKER = re.compile(
    r"^(MM?\.|Mme)\s*([^\s.,;:!?()«»\d][^.,;:!?()«»\n\d]{1,58}?)"
    r"(?:\s*\([^()\n]{1,40}\)|,[^.\n]{1,60})?\.(?=\s|$)"
)
_SMALL_WORDS = {
    "de", "du", "des", "la", "le", "les", "l'", "d'", "et", "à", "au", "aux", "sur", "pour",
    "par", "en", "dans", "relative", "relatif", "portant", "concernant",
}


def section_parts(external_id: str) -> tuple[str, int, int] | None:
    """Return (item key, item, section) of a debate section id, or None for another id."""
    match = DEBATE_ID.match(external_id)
    if not match:
        return None
    return external_id.rsplit("_", 1)[0], int(match.group(3)), int(match.group(4))


def item_headings(sections: Iterable[tuple[str, str]]) -> dict[str, str]:
    """Map each item key to the heading of its first section, from (external id, text) pairs."""
    headings: dict[str, str] = {}
    for external_id, text in sections:
        parts = section_parts(external_id)
        if parts and parts[2] == 0 and (heading := section_heading(text)):
            headings[parts[0]] = heading
    return headings


def _shorten(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    cut = text[: limit - 1].rsplit(" ", 1)[0]
    return cut.rstrip(" ,;:-") + "…"


def _readable_case(words: list[str]) -> str:
    """Lower-case a heading printed in capitals, keeping names after "M." capitalised."""
    out: list[str] = []
    name_words = 0
    in_brackets = False
    for i, word in enumerate(words):
        lower = word.lower()
        bare = lower.strip("(),.;:")
        if word.startswith("("):
            in_brackets = True
        if in_brackets or (name_words and bare not in _SMALL_WORDS):
            out.append(lower.title() if "'" not in lower else lower.capitalize())
            name_words = max(0, name_words - 1)
        elif i == 0:
            out.append(lower.capitalize())
        else:
            out.append(lower)
            name_words = 0
        if word.endswith(")"):
            in_brackets = False
        if bare in {"m", "mm"}:
            out[-1] = word
            name_words = 3
    return " ".join(out)


def section_heading(text: str) -> str:
    """Return the printed heading that opens ``text`` (in readable case), or ""."""
    first = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    words: list[str] = []
    for word in first.split():
        if any(c.islower() for c in word):
            break
        words.append(word)
    # OCR runs the heading into the first speech: "… PAUL BERT M. le président."
    while words and len(words[-1].strip(".,:;")) <= 2:
        words.pop()
    letters = sum(c.isalpha() for w in words for c in w)
    whole_line = len(words) == len(first.split())
    if not words or (len(words) < 2 and not (whole_line and letters >= 6)) or letters < 6:
        return ""
    if letters < 0.6 * sum(len(w) for w in words):
        return ""
    return _shorten(_readable_case(words).rstrip(".,:; "), _HEADING_MAX)


def first_speaker(text: str) -> str:
    """Return the first speaker of a debate section ("M. Achard"), or ""."""
    body = text.lstrip()
    heading = section_heading(body)
    if heading:
        # Skip the capitals of the heading to reach the first speech.
        for match in re.finditer(r"\b(MM?\.|Mme)\s", body[:600]):
            if speaker := _speaker(_SPEAKER.match(body[match.start():])):
                return speaker
        return ""
    return _speaker(_SPEAKER.match(body))


def _speaker(found: re.Match[str] | None) -> str:
    if found is None:
        return ""
    name = found.group(2).strip()
    tokens = name.split()
    if len(tokens) > 7 or name.isupper() or len(tokens[-1]) == 1:
        return ""
    return f"{found.group(1)} {name}"


def debate_title(*, when: str, text: str, section: int | None, item_heading: str = "") -> str:
    """Title a debate section: "Séance du <date> — <heading>", else the item and its speaker."""
    sitting = f"Séance du {when}" if when else "Séance"
    heading = section_heading(text)
    if heading:
        return _shorten(f"{sitting} — {heading}", TITLE_MAX)
    speaker = first_speaker(text)
    where = f"section {section}" if section is not None else ""
    item_heading = _shorten(item_heading, 80)
    if item_heading and speaker:
        title = f"{sitting} — {item_heading} ({where}, {speaker})" if where else (
            f"{sitting} — {item_heading} ({speaker})")
    elif item_heading:
        title = f"{sitting} — {item_heading}" + (f" ({where})" if where else "")
    elif speaker:
        title = f"{sitting}, {where} — {speaker}" if where else f"{sitting} — {speaker}"
    else:
        title = f"{sitting}, {where}" if where else sitting
    return _shorten(title, TITLE_MAX)


def raw_title(text: str, limit: int = 200) -> str:
    """Return the first non-blank line of ``text`` as printed (the OCR's own head line)."""
    first = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    return first if len(first) <= limit else first[: limit - 1] + "…"
