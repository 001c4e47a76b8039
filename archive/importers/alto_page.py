"""Read one ALTO page file into a document's text builder, refusing what it cannot trust.

A page is one file (its ``Page`` elements, usually one, read as one page). Its text blocks are
read in file order, ``ComposedBlock`` and margins included. Refused, each with the file and
line: what ``safe_xml`` refuses (size, DOCTYPE, malformed XML), a root other than ``alto`` in
one of ``ALTO_NAMESPACES``, a ``String`` without ``CONTENT``, a ``WC`` that is not a number
from 0 to 1, and a block position or size that is not a number. ``CC`` (per-character
confidence) is ignored.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from archive.importers.alto_text import AltoTextBuilder
from archive.importers.records import RecordError
from archive.importers.safe_xml import iter_xml_file

ALTO_NAMESPACES = {
    "http://www.loc.gov/standards/alto/ns-v2#": "ALTO v2",
    "http://www.loc.gov/standards/alto/ns-v3#": "ALTO v3",
    "http://www.loc.gov/standards/alto/ns-v4#": "ALTO v4",
    "http://schema.ccs-gmbh.com/ALTO": "ALTO v1/v2 (CCS)",
}
_BOX = ("HPOS", "VPOS", "WIDTH", "HEIGHT")


def split_tag(tag: object) -> tuple[str, str]:
    """Return (namespace, local name) of an element tag; comments give ("", "")."""
    if not isinstance(tag, str):
        return "", ""
    if tag.startswith("{"):
        namespace, _, name = tag[1:].partition("}")
        return namespace, name
    return "", tag


def is_alto_root(tag: object) -> bool:
    namespace, name = split_tag(tag)
    return name == "alto" and namespace in ALTO_NAMESPACES


def read_alto_page(path: Path, shown: str, *, max_bytes: int, text: AltoTextBuilder) -> None:
    """Stream the page at ``path`` (named ``shown`` in messages) and feed its words to ``text``.

    Each ``TextBlock`` is read at its end and then dropped with whatever preceded it, so the
    page's memory is bounded by its largest block (``docs/hardening.md`` shows the measure).
    """
    events = iter_xml_file(path, shown, max_bytes=max_bytes)
    _, root = next(events)
    if not is_alto_root(root.tag):
        namespace, name = split_tag(root.tag)
        found = f"<{name}>" + (f" in namespace {namespace}" if namespace else " in no namespace")
        raise RecordError(root.sourceline or 1, (
            f"{shown}: the root element is {found}, not an ALTO <alto> (namespaces accepted: "
            + ", ".join(ALTO_NAMESPACES) + ")"
        ))
    namespace = split_tag(root.tag)[0]

    def tag(name: str) -> str:
        return f"{{{namespace}}}{name}"

    unit_tag, description, page_tag = tag("MeasurementUnit"), tag("Description"), tag("Page")
    block_tag, string, hyp = tag("TextBlock"), tag("String"), tag("HYP")
    dropped = {block_tag, tag("ComposedBlock"), tag("Illustration"), tag("GraphicalElement")}
    unit = ""
    page: Any = None
    started = False

    def start_page() -> None:
        nonlocal started
        if not started:
            text.page_start(
                shown, unit=unit.strip(),
                width=_number(page, "WIDTH", shown) if page is not None else None,
                height=_number(page, "HEIGHT", shown) if page is not None else None,
            )
            started = True

    for event, element in events:
        if event == "start":
            if element.tag == page_tag and page is None:
                page = element
                start_page()
            elif element.tag == block_tag:
                start_page()
            continue
        if element.tag == unit_tag and not unit:
            parent = element.getparent()
            if parent is not None and parent.tag == description and parent.getparent() is root:
                unit = element.text or ""
        elif element.tag == block_tag:
            _read_block(element, shown, string, hyp, tag("TextLine"), text)
        if element.tag in dropped:  # read: drop it and every sibling before it
            element.clear()
            while element.getprevious() is not None:
                del element.getparent()[0]
    start_page()


def _read_block(block: Any, shown: str, string: str, hyp: str, line_tag: str,
                text: AltoTextBuilder) -> None:
    box = tuple(_number(block, name, shown) for name in _BOX)
    text.block_start(block.get("ID") or "", (box[0], box[1], box[2], box[3]))
    for line in block.iter(line_tag):
        hyphenated = False
        for item in line:
            if item.tag == string:
                content = item.get("CONTENT")
                if content is None:
                    raise RecordError(item.sourceline or 0,
                                      f"{shown}: a <String> without CONTENT")
                text.word(content, _confidence(item, shown),
                          subs_type=item.get("SUBS_TYPE"),
                          subs_content=item.get("SUBS_CONTENT"))
                hyphenated = False
            elif item.tag == hyp:
                hyphenated = True
        text.line_end(hyphenated=hyphenated)


def _number(element: Any, name: str, shown: str) -> float | None:
    value = element.get(name)
    if value is None:
        return None
    try:
        number = float(value)
    except ValueError:
        number = math.nan
    if not math.isfinite(number):
        _, local = split_tag(element.tag)
        raise RecordError(element.sourceline or 0,
                          f"{shown}: {name}={value!r} of <{local}> is not a number")
    return number


def _confidence(element: Any, shown: str) -> float | None:
    confidence = _number(element, "WC", shown)
    if confidence is not None and not 0 <= confidence <= 1:
        raise RecordError(element.sourceline or 0,
                          f"{shown}: WC={element.get('WC')!r} of <String> is not between 0 and 1")
    return confidence
