"""Offsets between a chunk's OCR text and its correction, free of Django.

A correction replaces a chunk's text as a whole; the document's text stays the OCR's, so every
stored offset (chunk ranges, verdict evidence, picked quotes, cited answers, page layout) keeps
meaning the same characters. `OffsetMap` aligns the two texts (difflib, word by word) and
carries an offset from one to the other: equal stretches map exactly, a replaced stretch maps
proportionally inside its counterpart.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Protocol

_TOKEN = re.compile(r"\s+|[^\s]+")


class _Chunk(Protocol):
    @property
    def pk(self) -> int | None: ...
    @property
    def char_start(self) -> int: ...
    @property
    def char_end(self) -> int: ...


@dataclass(frozen=True)
class _Block:
    source_start: int
    source_end: int
    target_start: int
    target_end: int


class OffsetMap:
    """Carry character offsets between an original text and its corrected text.

    The texts are aligned word by word (runs of spaces and of other characters), after their
    common beginning and end are set aside; words frequent in the passage are matched only
    next to rarer ones (difflib's autojunk). Aligning every character, or every word with no
    junk, took 9 to 13 s on an 8,150-character passage of repetitive minutes; this takes
    hundredths of a second (tests/archive/test_corrections.py aligns that passage).
    """

    def __init__(self, original: str, corrected: str):
        head = 0
        most = min(len(original), len(corrected))
        while head < most and original[head] == corrected[head]:
            head += 1
        tail = 0
        while (tail < most - head
               and original[len(original) - 1 - tail] == corrected[len(corrected) - 1 - tail]):
            tail += 1
        old, new = _tokens(original, head, len(original) - tail), _tokens(
            corrected, head, len(corrected) - tail)
        matcher = SequenceMatcher(None, [t for _, _, t in old], [t for _, _, t in new],
                                  autojunk=True)
        self._blocks = [_Block(0, head, 0, head)]
        for _, i1, i2, j1, j2 in matcher.get_opcodes():
            self._blocks.append(_Block(_at(old, i1, head), _at(old, i2, head),
                                       _at(new, j1, head), _at(new, j2, head)))
        self._blocks.append(_Block(len(original) - tail, len(original),
                                   len(corrected) - tail, len(corrected)))
        self.original_length = len(original)
        self.corrected_length = len(corrected)

    @staticmethod
    def _carry(blocks: Iterable[tuple[int, int, int, int]], offset: int, limit: int) -> int:
        for start, end, target_start, target_end in blocks:
            if start <= offset <= end:
                if end == start:
                    return target_start
                return target_start + (offset - start) * (target_end - target_start) // (
                    end - start)
        return limit

    def to_corrected(self, offset: int) -> int:
        """The corrected text's offset for an offset into the original."""
        return self._carry(((b.source_start, b.source_end, b.target_start, b.target_end)
                            for b in self._blocks), offset, self.corrected_length)

    def to_original(self, offset: int) -> int:
        """The original text's offset for an offset into the corrected text."""
        return self._carry(((b.target_start, b.target_end, b.source_start, b.source_end)
                            for b in self._blocks), offset, self.original_length)


def _tokens(text: str, start: int, end: int) -> list[tuple[int, int, str]]:
    """The words and spaces of text[start:end], with their offsets in `text`."""
    return [(m.start() + start, m.end() + start, m.group())
            for m in _TOKEN.finditer(text[start:end])]


def _at(tokens: list[tuple[int, int, str]], index: int, empty: int) -> int:
    """The offset where token `index` starts (the end of the last one past it)."""
    if index < len(tokens):
        return tokens[index][0]
    return tokens[-1][1] if tokens else empty


def corrected_slice(text: str, chunks: Iterable[_Chunk], corrected: Mapping[int, str],
                    start: int, end: int) -> str:
    """The document's characters start..end (offsets into the OCR text) as corrected.

    `corrected` maps the ids of corrected chunks to their text in force; outside them the OCR
    text stands. A range that cuts into a corrected chunk takes the mapped part of it.
    """
    parts: list[str] = []
    cursor = start
    for chunk in sorted(chunks, key=lambda c: c.char_start):
        if (chunk.pk is None or chunk.pk not in corrected or chunk.char_end <= start
                or chunk.char_start >= end):
            continue
        lo, hi = max(start, chunk.char_start), min(end, chunk.char_end)
        parts.append(text[cursor:lo])
        new = corrected[chunk.pk]
        offsets = OffsetMap(text[chunk.char_start:chunk.char_end], new)
        parts.append(new[offsets.to_corrected(lo - chunk.char_start):
                         offsets.to_corrected(hi - chunk.char_start)])
        cursor = hi
    parts.append(text[cursor:end])
    return "".join(parts)
