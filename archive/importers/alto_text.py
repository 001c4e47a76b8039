"""Build one document's text and layout from the words of its ALTO pages, in reading order.

The text, as the page reader feeds it: words (``String@CONTENT``) are separated by one space,
``SP`` included, and a line ends with a space; a new text block or page starts a paragraph
(a blank line). A word cut at a line end is written once, whole: ``SUBS_TYPE="HypPart1"`` with
``SUBS_CONTENT`` gives the whole word and its ``HypPart2`` adds nothing but its confidence; a
line ending with a ``HYP`` element (or a ``HypPart1`` without ``SUBS_CONTENT``) joins the next
word to it, dropping a hyphen left at its end. A joined word belongs to the block it starts in,
and its confidence is the mean of its parts'.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from archive.layout import DocumentLayout, LayoutBlock, LayoutPage

# Hyphens an OCR may leave at the end of the first part of a cut word.
_HYPHENS = "-\u2010\u00ac\u00ad"
# Word confidences are kept to four decimals (producers write two or three).
_CONFIDENCE_DECIMALS = 4


@dataclass
class _BlockDraft:
    id: str
    box: tuple[float | None, float | None, float | None, float | None]
    char_start: int | None = None
    char_end: int = 0
    word_starts: list[int] = field(default_factory=list)
    word_confidences: list[float] = field(default_factory=list)


@dataclass
class _PageDraft:
    number: int
    source_file: str
    width: float | None
    height: float | None
    unit: str
    blocks: list[_BlockDraft] = field(default_factory=list)


@dataclass
class _WordDraft:
    text: str
    start: int
    block: _BlockDraft
    confidences: list[float]


class AltoTextBuilder:
    """Collect the words of a document's pages; ``result()`` gives its text and layout."""

    def __init__(self) -> None:
        self._parts: list[str] = []
        self._length = 0
        self._pages: list[_PageDraft] = []
        self._block: _BlockDraft | None = None
        self._word: _WordDraft | None = None  # the last word: a cut word still grows
        self._paragraph = False  # the next word opens a paragraph (a new block or page)
        self._join_next = False  # the next word continues the last one (a line-end hyphen)
        self._drop_part2 = False  # SUBS_CONTENT gave the whole word: its HypPart2 adds nothing

    def page_start(self, source_file: str, *, width: float | None = None,
                   height: float | None = None, unit: str = "") -> None:
        self._pages.append(_PageDraft(len(self._pages) + 1, source_file, width, height, unit))
        self._block = None
        self._paragraph = True

    def block_start(self, block_id: str, box: tuple[float | None, float | None, float | None,
                                                    float | None]) -> None:
        if not self._pages:
            raise ValueError("a block outside any page")
        self._block = _BlockDraft(block_id, box)
        self._pages[-1].blocks.append(self._block)
        self._paragraph = True

    def word(self, content: str, confidence: float | None, *, subs_type: str | None = None,
             subs_content: str | None = None) -> None:
        """Add one ``String``: its CONTENT, WC, and hyphenation attributes."""
        text = " ".join(content.split())
        if subs_type == "HypPart2" and self._drop_part2 and self._word is not None:
            self._word.confidences += [confidence] if confidence is not None else []
            self._drop_part2 = self._join_next = False
            return
        self._drop_part2 = False
        whole = " ".join((subs_content or "").split())
        if subs_type == "HypPart1" and whole:
            self._start_word(whole, confidence)
            self._drop_part2, self._join_next = True, False
            return
        if not text:
            return
        if self._join_next and self._word is not None:
            word = self._word
            if len(word.text) > 1 and word.text[-1] in _HYPHENS:
                word.text = word.text[:-1]
            word.text += text
            word.confidences += [confidence] if confidence is not None else []
        else:
            self._start_word(text, confidence)
        self._join_next = subs_type == "HypPart1"

    def line_end(self, *, hyphenated: bool) -> None:
        """End a ``TextLine``; ``hyphenated`` when it ends with a ``HYP`` element."""
        if hyphenated and not self._drop_part2 and self._word is not None:
            self._join_next = True

    def result(self) -> tuple[str, DocumentLayout]:
        self._finish_word()
        pages = tuple(
            LayoutPage(
                number=page.number, source_file=page.source_file, width=page.width,
                height=page.height, unit=page.unit,
                blocks=tuple(_block_layout(block) for block in page.blocks
                             if block.char_start is not None),
            )
            for page in self._pages
        )
        return "".join(self._parts), DocumentLayout(pages)

    def _start_word(self, text: str, confidence: float | None) -> None:
        if self._block is None:
            raise ValueError("a word outside any text block")
        self._finish_word()
        if self._length:
            self._append("\n\n" if self._paragraph else " ")
        self._paragraph = False
        self._word = _WordDraft(text, self._length, self._block,
                                [confidence] if confidence is not None else [])

    def _finish_word(self) -> None:
        word, self._word = self._word, None
        if word is None:
            return
        self._append(word.text)
        block = word.block
        if block.char_start is None:
            block.char_start = word.start
        block.char_end = word.start + len(word.text)
        if word.confidences:
            block.word_starts.append(word.start)
            block.word_confidences.append(
                round(sum(word.confidences) / len(word.confidences), _CONFIDENCE_DECIMALS)
            )

    def _append(self, piece: str) -> None:
        self._parts.append(piece)
        self._length += len(piece)


def _block_layout(block: _BlockDraft) -> LayoutBlock:
    start = block.char_start or 0
    return LayoutBlock(
        id=block.id, hpos=block.box[0], vpos=block.box[1], width=block.box[2],
        height=block.box[3], char_start=start, char_end=block.char_end,
        word_starts=tuple(s - start for s in block.word_starts),
        word_confidences=tuple(block.word_confidences),
    )
