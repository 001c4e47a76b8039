"""Hold the mutable state of one sub-question loop."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, timedelta

from agent.engine.schemas import SearchArgs
from agent.engine.types import AcceptedChunk, HeldChunk, Memory, SubQuestionSpec
from common.search import DateWindow, Hit

SearchKey = tuple[str, str, str | None, str | None, str | None]


@dataclass(frozen=True)
class Scope:
    """Constrain a whole investigation to a sub-corpus and/or a date range."""

    sub_corpus: str | None = None
    date_from: str | None = None
    date_to: str | None = None

    def admits(self, hit: Hit) -> bool:
        """Tell whether a hit lies inside the scope (undated documents stay in)."""
        if self.sub_corpus and hit.sub_corpus != self.sub_corpus:
            return False
        if hit.date is None:
            return True
        day = hit.date[:10]
        if self.date_from and day < self.date_from:
            return False
        return not (self.date_to and day > self.date_to)


class HeldPool:
    """Keep at most `size` held chunks; when full, drop auto-held ones first, oldest first.

    Among chunks a policy held, the one whose verdict signals say least about the question
    goes first (those without signals before any with), then the oldest.
    """

    def __init__(self, size: int) -> None:
        self.size = size
        self.items: list[HeldChunk] = []

    def add(self, item: HeldChunk) -> HeldChunk | None:
        """Add a held chunk and return the one dropped to make room, if any."""
        dropped: HeldChunk | None = None
        if len(self.items) >= self.size:
            auto = [held for held in self.items if held.auto_held]
            if auto:
                dropped = min(auto, key=lambda held: held.order)
            else:
                dropped = min(self.items, key=_weakest_first)
            self.items.remove(dropped)
        self.items.append(item)
        return dropped

    def remove(self, chunk_id: int) -> HeldChunk | None:
        """Take a held chunk out of the pool."""
        for held in self.items:
            if held.hit.chunk_id == chunk_id:
                self.items.remove(held)
                return held
        return None


def _weakest_first(held: HeldChunk) -> tuple:
    """Sort key putting the held chunk to drop first: no signals, weakest signals, oldest."""
    if held.signals is None:
        return (0, (), held.order)
    return (1, tuple(-value for value in held.signals.strength()), held.order)


@dataclass
class LoopState:
    """Track one sub-question's loop; nothing here is shared with other sub-questions."""

    index: int
    sub_question: SubQuestionSpec
    held: HeldPool
    memory: Memory = field(default_factory=Memory)
    pending: list[Hit] = field(default_factory=list)
    accepted: list[AcceptedChunk] = field(default_factory=list)
    accepted_documents: set[str] = field(default_factory=set)
    seen_chunks: set[int] = field(default_factory=set)
    texts: dict[int, str] = field(default_factory=dict)
    action_log: list[str] = field(default_factory=list)
    feedback: list[str] = field(default_factory=list)
    searches: list[SearchArgs] = field(default_factory=list)  # as the agent asked them
    search_keys: set[SearchKey] = field(default_factory=set)
    last_attempt: SearchKey | None = None
    effective_steps: int = 0
    raw_steps: int = 0
    parse_failures: int = 0
    arrivals: int = 0

    def exclusions(self) -> tuple[frozenset[int], frozenset[str]]:
        """Return the chunks and documents later retrieval must skip."""
        return frozenset(self.seen_chunks), frozenset(self.accepted_documents)

    def next_order(self) -> int:
        """Return a strictly increasing arrival number."""
        self.arrivals += 1
        return self.arrivals


def widen(date_from: str | None, date_to: str | None, days: int) -> tuple[str | None, str | None]:
    """Widen a date window by `days` at each end; unparsable bounds pass through."""

    def shift(value: str | None, delta: int) -> str | None:
        if value is None:
            return None
        try:
            return (date.fromisoformat(value) + timedelta(days=delta)).isoformat()
        except ValueError:
            return value

    return shift(date_from, -days), shift(date_to, days)


def date_window(date_from: str | None, date_to: str | None) -> DateWindow | None:
    """Build the inclusive window searched between two ISO days (None when both are missing).

    One open end is closed at the other end's day. Raises ValueError on an unreadable day or a
    window that ends before it starts.
    """
    start = date.fromisoformat(date_from) if date_from else None
    end = date.fromisoformat(date_to) if date_to else None
    if start is None and end is None:
        return None
    return DateWindow(start or end, end or start)  # type: ignore[arg-type]


def target_day(value: str | None) -> DateWindow | None:
    """Return the single-day window of a full ISO date, None for anything else."""
    try:
        return DateWindow.around(date.fromisoformat(value)) if value else None
    except ValueError:
        return None


def inside(hit: Hit, date_from: str | None, date_to: str | None) -> bool:
    """Tell whether a hit's date lies inside a window (undated: outside)."""
    if hit.date is None:
        return date_from is None and date_to is None
    day = hit.date[:10]
    if date_from and day < date_from:
        return False
    return not (date_to and day > date_to)
