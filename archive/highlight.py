"""Render a document's text as escaped HTML with chunk boundaries and a highlighted span."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from archive.corrections import OffsetMap


@dataclass(frozen=True)
class Span:
    start: int
    end: int


def _marked(text: str, offset: int, span: Span | None, first: list[bool]) -> str:
    """Escape ``text`` (found at ``offset``), wrapping the part inside ``span`` in <mark>."""
    if span is None:
        return escape(text)
    lo = max(span.start - offset, 0)
    hi = min(span.end - offset, len(text))
    if lo >= hi:
        return escape(text)
    # Only the first mark gets the id the page scrolls to.
    mark_id = ' id="highlight"' if first[0] else ""
    first[0] = False
    return (
        escape(text[:lo]) + f'<mark class="evidence"{mark_id}>' + escape(text[lo:hi])
        + "</mark>" + escape(text[hi:])
    )


def _corrected_html(ocr: str, corrected: str, offset: int, span: Span | None,
                    first: list[bool]) -> str:
    """A corrected chunk's text, escaped, the span (offsets into the OCR) carried onto it."""
    if span is not None:
        offsets = OffsetMap(ocr, corrected)
        lo = offsets.to_corrected(min(max(span.start - offset, 0), len(ocr)))
        hi = offsets.to_corrected(min(max(span.end - offset, 0), len(ocr)))
        span = Span(offset + lo, offset + hi)
    return _marked(corrected, offset, span, first)


def document_html(
    text: str, chunks, span: Span | None = None, chunk_id: int | None = None,
    corrected: Mapping[int, str] | None = None,
) -> SafeString:
    """Return the full text, every piece escaped, each chunk wrapped in a <span> block.

    A chunk in `corrected` (chunk id -> the text of its correction in force) shows that text,
    marked, in place of the OCR's; offsets stay the OCR text's (archive/corrections.py).
    """
    corrected = corrected or {}
    if span is not None:
        span = Span(max(0, span.start), min(len(text), span.end))
        if span.start >= span.end:
            span = None
    parts: list[str] = []
    first = [True]
    cursor = 0
    for chunk in sorted(chunks, key=lambda c: c.char_start):
        if chunk.char_start > cursor:
            parts.append(_marked(text[cursor : chunk.char_start], cursor, span, first))
        classes = "chunk chunk-selected" if chunk.pk == chunk_id else "chunk"
        ocr = text[chunk.char_start : chunk.char_end]
        if chunk.pk in corrected:
            classes += " chunk-corrected"
            label = f"chunk {chunk.ordinal} · corrected"
            body = _corrected_html(ocr, corrected[chunk.pk], chunk.char_start, span, first)
        else:
            label = f"chunk {chunk.ordinal}"
            body = _marked(ocr, chunk.char_start, span, first)
        parts.append(
            f'<span class="{classes}" id="chunk-{chunk.pk}" data-ordinal="{chunk.ordinal}">'
            f'<span class="chunk-label">{label}</span>' + body + "</span>"
        )
        cursor = max(cursor, chunk.char_end)
    if cursor < len(text):
        parts.append(_marked(text[cursor:], cursor, span, first))
    return mark_safe("".join(parts))  # every piece of document text above went through escape()
