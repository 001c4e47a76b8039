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
from archive.importers.safe_xml import parse_xml_file

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
    """Parse the page at ``path`` (named ``shown`` in messages) and feed its words to ``text``."""
    root = parse_xml_file(path, shown, max_bytes=max_bytes)
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

    unit = (root.findtext(f"{tag('Description')}/{tag('MeasurementUnit')}") or "").strip()
    page = root.find(f".//{tag('Page')}")
    text.page_start(
        shown, unit=unit,
        width=_number(page, "WIDTH", shown) if page is not None else None,
        height=_number(page, "HEIGHT", shown) if page is not None else None,
    )
    string, hyp = tag("String"), tag("HYP")
    for block in root.iter(tag("TextBlock")):
        box = tuple(_number(block, name, shown) for name in _BOX)
        text.block_start(block.get("ID") or "", (box[0], box[1], box[2], box[3]))
        for line in block.iter(tag("TextLine")):
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
