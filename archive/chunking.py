"""Split document text into sentence-aligned chunks with exact character spans.

Rules (TRACE spec): chunks end at sentence boundaries, hold at most ``max_tokens`` whitespace
tokens, never overlap, and every chunk is ``text[char_start:char_end]`` exactly (no stripping
after the fact). A sentence longer than the cap is cut at the cap, on token boundaries.

Debate OCR often glues sentence punctuation to the next word ("la parole.M. le président").
With ``split_glued=True`` (the default) a period, ``!`` or ``?`` directly followed by an
upper-case letter also ends a sentence, unless the word before it is an abbreviation such as
"M." or "MM." or a single initial ("J.Ferry"). Glued boundaries only change where chunks may
be cut: chunk text is never altered.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from common.sentences import sentence_spans

MAX_CHUNK_TOKENS = 1000

_TOKEN = re.compile(r"\S+")


@dataclass(frozen=True)
class TextChunk:
    ordinal: int
    text: str
    char_start: int
    char_end: int
    token_count: int


def _token_spans(text: str, start: int, end: int) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for m in _TOKEN.finditer(text, start, end)]


def chunk_text(
    text: str, *, max_tokens: int = MAX_CHUNK_TOKENS, split_glued: bool = True
) -> list[TextChunk]:
    """Pack sentences greedily into chunks of at most ``max_tokens`` whitespace tokens."""
    if max_tokens < 1:
        raise ValueError("max_tokens must be at least 1")
    # Units are sentences, or cap-sized pieces of an over-long sentence.
    units: list[tuple[int, int, int]] = []
    for start, end in sentence_spans(text, split_glued=split_glued):
        # Counting is enough for the sentences under the cap (nearly all): no spans to build.
        count = len(_TOKEN.findall(text, start, end))
        if count <= max_tokens:
            units.append((start, end, count))
            continue
        tokens = _token_spans(text, start, end)
        for i in range(0, len(tokens), max_tokens):
            piece = tokens[i : i + max_tokens]
            units.append((piece[0][0], piece[-1][1], len(piece)))

    chunks: list[TextChunk] = []
    current: list[tuple[int, int, int]] = []
    count = 0

    def flush() -> None:
        if not current:
            return
        start, end = current[0][0], current[-1][1]
        body = text[start:end]
        chunks.append(TextChunk(len(chunks), body, start, end, len(body.split())))

    for unit in units:
        # A glued boundary splits one whitespace token in two, so the sum of unit counts is an
        # upper bound on the chunk's real token count: the cap always holds.
        if current and count + unit[2] > max_tokens:
            flush()
            current, count = [], 0
        current.append(unit)
        count += unit[2]
    flush()
    return chunks


def content_sha256(text: str) -> str:
    """Return the hex SHA-256 of ``text`` (UTF-8): a chunk's content hash."""
    # surrogatepass: an unstorable text still gets a key; the database refuses it on writing.
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
