"""Give stored debate sections readable titles; the OCR head line moves to metadata.raw_title.

Frozen: the titling rules, the French date format and the content hash are copied here as they
were when this migration was written (archive/titles.py, common/french_dates.py,
archive/importers/records.py), so that later changes to those modules never change what this
migration does. `manage.py retitle` applies the current rules to a stored archive.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable
from typing import Any

from django.db import migrations

FRENCH_MONTH_NAMES = (
    "janvier", "février", "mars", "avril", "mai", "juin", "juillet", "août", "septembre",
    "octobre", "novembre", "décembre",
)
# Metadata the shared-layout importer writes for a debate section (other layouts keep theirs).
_SECTION_METADATA = {"sitting", "section", "raw_title"}
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


def _section_parts(external_id: str) -> tuple[str, int, int] | None:
    """Return (item key, item, section) of a debate section id, or None for another id."""
    match = DEBATE_ID.match(external_id)
    if not match:
        return None
    return external_id.rsplit("_", 1)[0], int(match.group(3)), int(match.group(4))


def _item_headings(sections: Iterable[tuple[str, str]]) -> dict[str, str]:
    """Map each item key to the heading of its first section, from (external id, text) pairs."""
    headings: dict[str, str] = {}
    for external_id, text in sections:
        parts = _section_parts(external_id)
        if parts and parts[2] == 0 and (heading := _section_heading(text)):
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


def _section_heading(text: str) -> str:
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


def _first_speaker(text: str) -> str:
    """Return the first speaker of a debate section ("M. Achard"), or ""."""
    body = text.lstrip()
    heading = _section_heading(body)
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


def _debate_title(*, when: str, text: str, section: int | None, item_heading: str = "") -> str:
    """Title a debate section: "Séance du <date> — <heading>", else the item and its speaker."""
    sitting = f"Séance du {when}" if when else "Séance"
    heading = _section_heading(text)
    if heading:
        return _shorten(f"{sitting} — {heading}", TITLE_MAX)
    speaker = _first_speaker(text)
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


def _raw_title(text: str, limit: int = 200) -> str:
    """Return the first non-blank line of ``text`` as printed (the OCR's own head line)."""
    first = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    return first if len(first) <= limit else first[: limit - 1] + "…"


def _french_date(date: Any, precision: str) -> str:
    if date is None:
        return ""
    if precision == "year":
        return str(date.year)
    month = FRENCH_MONTH_NAMES[date.month - 1]
    if precision == "month":
        return f"{month} {date.year}"
    day = "1er" if date.day == 1 else str(date.day)
    return f"{day} {month} {date.year}"


def _content_hash(document: Any) -> str:
    payload = json.dumps(
        [document.text, document.title, document.publication,
         document.date and document.date.isoformat(), document.date_precision, document.page,
         document.url, document.metadata],
        ensure_ascii=False, sort_keys=True, default=str,
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def _retitle_one(document: Any, headings: dict[str, str]) -> bool:
    parts = _section_parts(document.external_id)
    assert parts is not None
    item_key, sitting, section = parts
    before = (document.title, document.page, document.metadata)
    document.title = _debate_title(
        when=_french_date(document.date, document.date_precision), text=document.text,
        section=section, item_heading=headings.get(item_key, "") if section else "",
    )
    document.page = f"séance {sitting}, section {section}"
    document.metadata = {"sitting": sitting, "section": section,
                         "raw_title": _raw_title(document.text)}
    content_hash = _content_hash(document)
    if content_hash == document.content_hash:
        document.title, document.page, document.metadata = before
        return False
    document.content_hash = content_hash
    return True


def retitle(apps, schema_editor):
    document_model = apps.get_model("archive", "Document")
    documents = [
        d for d in document_model.objects.filter(sub_corpus__genre="debates")
        .select_related("sub_corpus").order_by("pk")
        if _section_parts(d.external_id) and set(d.metadata or {}) <= _SECTION_METADATA
    ]
    changed = []
    for slug in {d.sub_corpus.slug for d in documents}:
        sections = [d for d in documents if d.sub_corpus.slug == slug]
        headings = _item_headings((d.external_id, d.text) for d in sections)
        changed += [document for document in sections if _retitle_one(document, headings)]
    document_model.objects.bulk_update(
        changed, ["title", "page", "metadata", "content_hash"], batch_size=200
    )


class Migration(migrations.Migration):

    dependencies = [("archive", "0002_initial")]

    operations = [migrations.RunPython(retitle, migrations.RunPython.noop)]
