"""Shared value types of the retrieval channels (no Django imports here)."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field, replace


@dataclass(frozen=True, slots=True)
class Hit:
    """One document found by one channel, represented by its best chunk."""

    chunk_id: int
    document_id: int
    document_key: str
    sub_corpus: str
    score: float
    rank: int
    channel: str


@dataclass(frozen=True, slots=True)
class FusedHit:
    """One document after fusing several channels' rankings."""

    document_key: str
    document_id: int
    sub_corpus: str
    score: float
    rank: int
    chunk_ids: dict[str, int] = field(default_factory=dict)
    channel_ranks: dict[str, int] = field(default_factory=dict)

    @property
    def best_chunk_id(self) -> int:
        """Return the chunk of the channel that ranked this document highest."""
        channel = min(self.channel_ranks, key=lambda name: (self.channel_ranks[name], name))
        return self.chunk_ids[channel]


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


@dataclass(frozen=True, slots=True)
class Constraints:
    """Candidate restrictions every channel applies inside its own query."""

    sub_corpora: tuple[str, ...] | None = None
    document_ids: tuple[int, ...] | None = None
    exclude_chunk_ids: tuple[int, ...] = ()
    exclude_document_ids: tuple[int, ...] = ()
    exclude_document_keys: tuple[str, ...] = ()
    cap: int = 20
    date_window: DateWindow | None = None

    def __post_init__(self) -> None:
        if self.cap < 1:
            raise ValueError("cap must be at least 1")
        # Accept any iterable from callers but store tuples so the value stays hashable.
        for name in ("sub_corpora", "document_ids"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, tuple):
                object.__setattr__(self, name, tuple(value))
        for name in ("exclude_chunk_ids", "exclude_document_ids", "exclude_document_keys"):
            value = getattr(self, name)
            if not isinstance(value, tuple):
                object.__setattr__(self, name, tuple(value))

    def with_(self, **changes) -> Constraints:
        """Return a copy with some fields changed."""
        return replace(self, **changes)
