"""Render a document's text as escaped HTML with chunk boundaries and a highlighted span."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Mapping
from dataclasses import dataclass

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from archive.corrections import OffsetMap
from archive.layout import DocumentLayout, RatedWord, rated_words


@dataclass(frozen=True)
class Span:
    start: int
    end: int


# The bands a rated word is shaded in (its OCR confidence below the bound), lowest first.
CONFIDENCE_BANDS = ((0.5, "ocr-low"), (0.8, "ocr-mid"))


class _Shading:
    """Escape pieces of the text, each word rated under the last band in a <span> of its band."""

    def __init__(self, words: list[RatedWord]) -> None:
        self.words = words
        self.starts = [word.start for word in words]

    def __call__(self, text: str, offset: int) -> str:
        if not self.words:
            return escape(text)
        parts: list[str] = []
        cursor, end = offset, offset + len(text)
        index = max(bisect_right(self.starts, offset) - 1, 0)
        while index < len(self.words) and self.words[index].start < end:
            word = self.words[index]
            index += 1
            lo, hi = max(word.start, cursor), min(word.end, end)
            if lo >= hi:
                continue
            band = next(name for bound, name in CONFIDENCE_BANDS if word.confidence < bound)
            parts.append(escape(text[cursor - offset:lo - offset]))
            parts.append(f'<span class="{band}" data-confidence="{word.confidence:.2f}">'
                         + escape(text[lo - offset:hi - offset]) + "</span>")
            cursor = hi
        parts.append(escape(text[cursor - offset:]))
        return "".join(parts)


def _marked(text: str, offset: int, span: Span | None, first: list[bool],
            shade: _Shading) -> str:
    """Escape ``text`` (found at ``offset``), wrapping the part inside ``span`` in <mark>."""
    if span is None:
        return shade(text, offset)
    lo = max(span.start - offset, 0)
    hi = min(span.end - offset, len(text))
    if lo >= hi:
        return shade(text, offset)
    # Only the first mark gets the id the page scrolls to.
    mark_id = ' id="highlight"' if first[0] else ""
    first[0] = False
    return (
        shade(text[:lo], offset) + f'<mark class="evidence"{mark_id}>'
        + shade(text[lo:hi], offset + lo) + "</mark>" + shade(text[hi:], offset + hi)
    )


def _corrected_html(ocr: str, corrected: str, offset: int, span: Span | None,
                    first: list[bool]) -> str:
    """A corrected chunk's text, escaped, the span (offsets into the OCR) carried onto it."""
    if span is not None:
        offsets = OffsetMap(ocr, corrected)
        lo = offsets.to_corrected(min(max(span.start - offset, 0), len(ocr)))
        hi = offsets.to_corrected(min(max(span.end - offset, 0), len(ocr)))
        span = Span(offset + lo, offset + hi)
    # The OCR's confidences rate the OCR's words, not the historian's: no shading here.
    return _marked(corrected, offset, span, first, _Shading([]))


def document_html(
    text: str, chunks, span: Span | None = None, chunk_id: int | None = None,
    corrected: Mapping[int, str] | None = None, layout: DocumentLayout | None = None,
) -> SafeString:
    """Return the full text, every piece escaped, each chunk wrapped in a <span> block.

    A chunk in `corrected` (chunk id -> the text of its correction in force) shows that text,
    marked, in place of the OCR's; offsets stay the OCR text's (archive/corrections.py).
    With the layout of a scanned document, each word its OCR rated under the top band of
    `CONFIDENCE_BANDS` is shaded by its band (the viewer's legend names them).
    """
    corrected = corrected or {}
    shade = _Shading(rated_words(layout, text, below=CONFIDENCE_BANDS[-1][0])
                     if layout is not None else [])
    if span is not None:
        span = Span(max(0, span.start), min(len(text), span.end))
        if span.start >= span.end:
            span = None
    parts: list[str] = []
    first = [True]
    cursor = 0
    for chunk in sorted(chunks, key=lambda c: c.char_start):
        if chunk.char_start > cursor:
            parts.append(_marked(text[cursor : chunk.char_start], cursor, span, first, shade))
        classes = "chunk chunk-selected" if chunk.pk == chunk_id else "chunk"
        ocr = text[chunk.char_start : chunk.char_end]
        if chunk.pk in corrected:
            classes += " chunk-corrected"
            label = f"chunk {chunk.ordinal} · corrected"
            body = _corrected_html(ocr, corrected[chunk.pk], chunk.char_start, span, first)
        else:
            label = f"chunk {chunk.ordinal}"
            body = _marked(ocr, chunk.char_start, span, first, shade)
        parts.append(
            f'<span class="{classes}" id="chunk-{chunk.pk}" data-ordinal="{chunk.ordinal}">'
            f'<span class="chunk-label">{label}</span>' + body + "</span>"
        )
        cursor = max(cursor, chunk.char_end)
    if cursor < len(text):
        parts.append(_marked(text[cursor:], cursor, span, first, shade))
    return mark_safe("".join(parts))  # every piece of document text above went through escape()
