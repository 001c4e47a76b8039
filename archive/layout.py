"""Where a document's text sits on its scanned pages, and how sure the OCR was of each word.

An imported ALTO document keeps one ``DocumentLayout`` (stored as JSON in ``Document.layout``):
its pages in order, each with its text blocks (ALTO ``TextBlock``: id, box, and the characters
of the document text the block printed). A block also keeps the confidence (ALTO ``String@WC``,
0 to 1) of each of its words that has one, with the word's start relative to the block's first
character. Word confidences are kept, not only block means, so that the confidence of any
character range (a chunk, a quoted sentence) is the mean over exactly the words it holds;
the starts are relative so that they stay short numbers in JSON.

``layout_span`` is the one lookup: a character range gives the pages and block boxes it covers
and the mean confidence of the words starting inside it. A chunk's stored confidence is that
mean for its ``char_start``/``char_end``, so each word counts in exactly one chunk.

No Django here: the viewer and the importer share these records.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterator
from dataclasses import dataclass

LAYOUT_VERSION = 1


@dataclass(frozen=True)
class LayoutBlock:
    """One text block of a page: its box in the page's unit and its characters in the text."""

    id: str
    hpos: float | None
    vpos: float | None
    width: float | None
    height: float | None
    char_start: int
    char_end: int
    # The words that carry a confidence: start (relative to char_start) and confidence.
    word_starts: tuple[int, ...] = ()
    word_confidences: tuple[float, ...] = ()

    @property
    def confidence(self) -> float | None:
        """Mean word confidence of the block, or None when no word carries one."""
        return _mean(self.word_confidences)


@dataclass(frozen=True)
class LayoutPage:
    """One scanned page (one ALTO file): its position in the document and its text blocks."""

    number: int
    source_file: str
    width: float | None = None
    height: float | None = None
    unit: str = ""  # ALTO MeasurementUnit of every box: pixel, mm10 or inch1200
    blocks: tuple[LayoutBlock, ...] = ()
    image: str = ""  # the page's IIIF Image API base (archive/iiif.py), when the import named one


@dataclass(frozen=True)
class CoveredBlock:
    """A block a character range touches, with the page it is on."""

    page: int
    source_file: str
    block: LayoutBlock


@dataclass(frozen=True)
class LayoutSpan:
    """What a character range covers: page numbers, blocks, and its words' mean confidence."""

    pages: tuple[int, ...]
    blocks: tuple[CoveredBlock, ...]
    confidence: float | None
    words_with_confidence: int


@dataclass(frozen=True)
class DocumentLayout:
    pages: tuple[LayoutPage, ...]

    @property
    def confidence(self) -> float | None:
        """Mean confidence over every word of the document that carries one."""
        return _mean([c for _, block in self.blocks() for c in block.word_confidences])

    def blocks(self) -> Iterator[tuple[LayoutPage, LayoutBlock]]:
        """Every block with its page, in text order."""
        for page in self.pages:
            for block in page.blocks:
                yield page, block

    def to_json(self) -> dict:
        """The stored form; block means are written for readers outside Python, never read.

        A page's ``image`` is written only when it has one, so layouts without images keep
        the form (and the content hash) they were stored with.
        """
        return {"version": LAYOUT_VERSION, "pages": [
            {"number": page.number, "source_file": page.source_file,
             "width": _number(page.width), "height": _number(page.height), "unit": page.unit,
             "blocks": [_block_json(block) for block in page.blocks],
             **({"image": page.image} if page.image else {})}
            for page in self.pages
        ]}

    @classmethod
    def from_json(cls, data: dict) -> DocumentLayout:
        if data.get("version") != LAYOUT_VERSION:
            raise ValueError(f"unknown layout version {data.get('version')!r}")
        return cls(tuple(
            LayoutPage(
                number=page["number"], source_file=page["source_file"],
                width=_float(page.get("width")), height=_float(page.get("height")),
                unit=page.get("unit", ""), image=page.get("image", ""),
                blocks=tuple(
                    LayoutBlock(
                        id=block["id"], hpos=_float(block["hpos"]), vpos=_float(block["vpos"]),
                        width=_float(block["width"]), height=_float(block["height"]),
                        char_start=block["char_start"], char_end=block["char_end"],
                        word_starts=tuple(block["word_starts"]),
                        word_confidences=tuple(float(c) for c in block["word_confidences"]),
                    )
                    for block in page["blocks"]
                ),
            )
            for page in data["pages"]
        ))


def layout_span(layout: DocumentLayout, char_start: int, char_end: int) -> LayoutSpan:
    """Return the pages and blocks ``[char_start, char_end)`` touches and its mean confidence.

    A block is covered when it shares a character with the range; a word counts when it starts
    inside the range. Blocks are in text order, so the walk stops at the first block after it.
    """
    pages: list[int] = []
    covered: list[CoveredBlock] = []
    confidences: list[float] = []
    if char_end <= char_start:
        return LayoutSpan((), (), None, 0)
    for page, block in layout.blocks():
        if block.char_start >= char_end:
            break
        if block.char_end <= char_start:
            continue
        covered.append(CoveredBlock(page.number, page.source_file, block))
        if not pages or pages[-1] != page.number:
            pages.append(page.number)
        first = bisect_left(block.word_starts, char_start - block.char_start)
        last = bisect_left(block.word_starts, char_end - block.char_start)
        confidences.extend(block.word_confidences[first:last])
    return LayoutSpan(tuple(pages), tuple(covered), _mean(confidences), len(confidences))


def page_range(layout: DocumentLayout, char_start: int, char_end: int) -> tuple[int, int] | None:
    """Return the first and last page numbers ``[char_start, char_end)`` is printed on."""
    pages = layout_span(layout, char_start, char_end).pages
    return (min(pages), max(pages)) if pages else None


@dataclass(frozen=True)
class RatedWord:
    """One word of the text and the confidence the OCR gave it (ALTO ``WC``)."""

    start: int
    end: int
    confidence: float


def rated_words(layout: DocumentLayout, text: str, *, below: float = 1.0) -> list[RatedWord]:
    """Return the words rated under ``below``, in text order (a word ends at a space or block)."""
    words = []
    for _, block in layout.blocks():
        for relative, confidence in zip(block.word_starts, block.word_confidences, strict=True):
            if confidence >= below:
                continue
            start = block.char_start + relative
            end = start
            while end < block.char_end and end < len(text) and not text[end].isspace():
                end += 1
            if end > start:
                words.append(RatedWord(start, end, confidence))
    return words


def _mean(values: tuple[float, ...] | list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _float(value: float | int | None) -> float | None:
    return float(value) if value is not None else None


def _number(value: float | None) -> float | int | None:
    # Whole numbers are written as integers: pixel boxes stay short and readable.
    return int(value) if value is not None and float(value).is_integer() else value


def _block_json(block: LayoutBlock) -> dict:
    confidence = block.confidence
    return {
        "id": block.id, "hpos": _number(block.hpos), "vpos": _number(block.vpos),
        "width": _number(block.width), "height": _number(block.height),
        "char_start": block.char_start, "char_end": block.char_end,
        "confidence": round(confidence, 4) if confidence is not None else None,
        "word_starts": list(block.word_starts), "word_confidences": list(block.word_confidences),
    }
