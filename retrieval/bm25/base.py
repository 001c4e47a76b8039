"""What every BM25 engine offers: apply per-document changes, search with filters, list contents."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from common.search import SearchRequest


@dataclass(frozen=True, slots=True)
class IndexedChunk:
    """One chunk as the index holds it (text analysed by the engine, never stored)."""

    chunk_id: int
    document_id: int
    document_key: str
    sub_corpus: str
    language: str  # analyzer language code ("fr", "xx" when none applies)
    day: int | None  # proleptic ordinal of the document's date
    text: str
    # The chunk's distinct folded words, as the vocabulary splits them (engines holding words).
    words: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class IndexChanges:
    """Documents to drop from the index, and the chunks to add (each document's current ones)."""

    remove_document_ids: tuple[int, ...] = ()
    add: tuple[IndexedChunk, ...] = field(default_factory=tuple)


@dataclass(frozen=True, slots=True)
class ChunkMatch:
    """One chunk found by a query, with its BM25 score."""

    chunk_id: int
    document_id: int
    document_key: str
    sub_corpus: str
    score: float


@dataclass(frozen=True, slots=True)
class WordQuery:
    """A substring search over the chunks' folded words, scored without reading any text.

    ``scored``: per query word, its variants with their weights; a chunk scores the sum over
    query words of the best weight among the variants it holds, and must hold one of them.
    ``required``: per required word, the words holding it; a chunk must hold one of each.
    When ``required`` is set, ``scored`` only ranks (a chunk may hold none of the variants).
    """

    scored: tuple[tuple[tuple[str, float], ...], ...]
    required: tuple[tuple[str, ...], ...] = ()


class IndexCorrupt(Exception):
    """The index on disk cannot be opened or read."""


class TextIndex(Protocol):
    """A BM25 index of chunks, updated per document and read from its last commit.

    One writer at a time (the caller holds the writer lock); any number of readers, each
    answering from the last committed state and picking up a newer commit on its next search.
    """

    def apply(self, changes: IndexChanges) -> None:
        """Remove and add chunks, then commit; a reader sees all of it or none of it."""
        ...

    def search(self, query: str, filters: SearchRequest, limit: int) -> list[ChunkMatch]:
        """Return up to ``limit`` chunks matching any query term, within the request's filters."""
        ...

    def documents_indexed(self) -> dict[int, int]:
        """Return the committed chunk count of every document in the index."""
        ...

    def chunk_count(self) -> int:
        """Return the number of chunks in the last commit (cheap: for health checks)."""
        ...

    def close(self) -> None:
        """Release readers and files."""
        ...


@runtime_checkable
class WordIndex(Protocol):
    """An index that also holds each chunk's folded words: the substring channel searches it."""

    def word_search(self, query: WordQuery, filters: SearchRequest, limit: int,
                    offset: int = 0) -> list[ChunkMatch]:
        """Return chunks ``offset`` to ``offset + limit`` of the word query, best first."""
        ...
