"""Refuse, before any write, every record value that PostgreSQL or the site would reject."""

from __future__ import annotations

import math
import re
from collections.abc import Iterator

from archive.importers.records import DocumentRecord, slug_for

# Text PostgreSQL cannot store: NUL, and UTF-16 surrogates that no UTF-8 encoding has.
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")
# What the `<slug:…>` URL converter matches: a sub-corpus outside it has no page.
_SLUG = re.compile(r"[-a-zA-Z0-9_]+")
# Where a document key is stored elsewhere (a verdict's or note's document_key).
DOCUMENT_KEY_MAX = 400


def _document_limits() -> dict[str, int]:
    # deferred: archive.importers loads without Django set up (the ALTO memory measurement's
    # child process, archive/alto_memory.py), and a model needs the app registry
    from archive.models import Document

    return {name: getattr(Document._meta.get_field(name), "max_length", 0) or 0
            for name in ("external_id", "title", "publication", "page", "url")}


def _sub_corpus_limits() -> dict[str, int]:
    from archive.models import SubCorpus  # deferred: as in _document_limits, the app registry

    return {name: getattr(SubCorpus._meta.get_field(name), "max_length", 0) or 0
            for name in ("slug", "name", "genre", "language")}


def unstorable_character(value: str) -> str:
    """Describe the first character of ``value`` PostgreSQL refuses, or return ""."""
    match = _UNSTORABLE.search(value)
    if match is None:
        return ""
    char = match.group()
    kind = "a NUL character" if char == "\x00" else f"a lone surrogate (U+{ord(char):04X})"
    return f"{kind} at position {match.start()}"


def _json_problems(value: object, where: str) -> Iterator[str]:
    if isinstance(value, str):
        if found := unstorable_character(value):
            yield f"{where} contains {found}"
    elif isinstance(value, float):
        if not math.isfinite(value):
            yield f"{where} is {value!r}, which JSON storage refuses"
    elif isinstance(value, dict):
        for key, item in value.items():
            if found := unstorable_character(str(key)):
                yield f"key {str(key)[:40]!r} of {where} contains {found}"
            yield from _json_problems(item, f"{where}.{str(key)[:40]}")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _json_problems(item, f"{where}[{i}]")


def record_problems(record: DocumentRecord) -> list[str]:
    """List what is wrong with ``record`` for storage; empty means it can be written."""
    problems: list[str] = []
    info = record.sub_corpus
    if not _SLUG.fullmatch(info.slug):
        problems.append(
            f"collection {info.slug[:80]!r} is not an identifier (letters a-z, digits, '-' and "
            f"'_' only, no spaces); rename it, e.g. {slug_for(info.slug)[:80]!r}"
        )
    for name, limit in _sub_corpus_limits().items():
        value = getattr(info, name)
        if len(value) > limit:
            label = {"slug": "collection", "name": "sub-corpus name (source)"}.get(name, name)
            problems.append(f"{label} has {len(value)} characters; at most {limit}")
    for name in ("slug", "name", "description"):
        if found := unstorable_character(getattr(info, name)):
            problems.append(f"sub-corpus {name} contains {found}")
    for name, limit in _document_limits().items():
        value = getattr(record, name)
        if len(value) > limit:
            problems.append(f"{name} has {len(value)} characters; at most {limit}")
        if found := unstorable_character(value):
            problems.append(f"{name} contains {found}")
    if len(record.key) > DOCUMENT_KEY_MAX:
        problems.append(f"document key {record.key[:40]!r}… has {len(record.key)} characters; "
                        f"collection and id together allow at most {DOCUMENT_KEY_MAX}")
    if found := unstorable_character(record.text):
        problems.append(f"text contains {found}")
    problems.extend(_json_problems(record.metadata, "metadata"))
    if record.layout is not None:
        # File names and block ids come from the files: a name that is not UTF-8 is refused here.
        problems.extend(_json_problems(record.layout.to_json(), "layout"))
    return problems
