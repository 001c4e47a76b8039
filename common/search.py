"""One request type from the engine port down to SQL/whoosh, one hit type back up."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any


@dataclass(frozen=True, slots=True)
class SubCorpusInfo:
    """Describe one sub-corpus as a retriever (or an importer) knows it."""

    slug: str
    name: str
    genre: str = ""
    description: str = ""
    language: str = ""


@dataclass(frozen=True, slots=True)
class DateWindow:
    """An inclusive range of days; a single target date has start == end."""

    start: dt.date
    end: dt.date

    def __post_init__(self) -> None:
        if self.end < self.start:
            raise ValueError(f"date window ends ({self.end}) before it starts ({self.start})")

    @classmethod
    def around(cls, day: dt.date) -> DateWindow:
        """Return the window holding a single day."""
        return cls(day, day)


def _tuple_or_none(value: Iterable[Any] | None) -> tuple[Any, ...] | None:
    return None if value is None else tuple(value)


@dataclass(frozen=True, slots=True)
class SearchRequest:
    """One search: a channel (or "warm_start") and every restriction to apply inside its query.

    `limit` is how many documents come back. `window` filters a one-channel search and is what
    the temporal channel ranks by; in a warm start it is the target date, which drives the
    temporal channel only and filters nothing. `sub_corpora` and `document_ids` restrict the
    candidates (None = no restriction, an empty tuple = nothing); exclusions remove chunks and
    documents already seen. `mode` is read by the substring channel only (auto | exact | fuzzy).
    """

    channel: str
    query: str = ""
    window: DateWindow | None = None
    sub_corpora: tuple[str, ...] | None = None
    document_ids: tuple[int, ...] | None = None
    exclude_chunk_ids: tuple[int, ...] = ()
    exclude_document_keys: tuple[str, ...] = ()
    limit: int = 10
    mode: str = "auto"

    def __post_init__(self) -> None:
        if self.limit < 1:
            raise ValueError("limit must be at least 1")
        # Accept any iterable from callers but store tuples so the value stays hashable.
        for name in ("sub_corpora", "document_ids"):
            object.__setattr__(self, name, _tuple_or_none(getattr(self, name)))
        for name in ("exclude_chunk_ids", "exclude_document_keys"):
            object.__setattr__(self, name, tuple(getattr(self, name)))

    def with_(self, **changes: Any) -> SearchRequest:
        """Return a copy with some fields changed."""
        return replace(self, **changes)


@dataclass(frozen=True, slots=True)
class Hit:
    """One document found by a channel (or a fusion), represented by its best chunk.

    Channels return hits without passage fields; `text`, `title`, `date` (ISO day) and
    `chunk_start` (the chunk's offset in its document's text) are filled from the archive before
    a hit reaches the engine, where the text is untrusted OCR data.
    `channel_ranks` holds the rank each contributing channel gave the document and
    `channel_chunks` the chunk each of them chose.
    """

    chunk_id: int
    document_id: int
    document_key: str
    sub_corpus: str
    score: float
    rank: int
    channel: str
    channel_ranks: Mapping[str, int] = field(default_factory=dict)
    channel_chunks: Mapping[str, int] = field(default_factory=dict)
    text: str = ""
    title: str = ""
    date: str | None = None
    chunk_start: int = 0

    def with_(self, **changes: Any) -> Hit:
        """Return a copy with some fields changed."""
        return replace(self, **changes)
