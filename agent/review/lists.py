"""Reads for the held and rejected lists of the review page: ranked by relevance, filtered, paged.

A question can leave a hundred held sources and more: they are ranked by relevance (the agent's
own order of the held documents from its final ranking first, then how high the searches ranked
each document: its best position in any search, then how many searches found it), filtered by a
text the historian types (title, sub-corpus, evidence, rationales, notes; case and accents
ignored) and shown a page at a time.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from agent.engine.events import RankingMade, SearchRan, WarmStartRan
from agent.models import Investigation
from agent.sources import ReviewedSource
from common.text import casefold_without_accents

PAGE_SIZE = 20


@dataclass(frozen=True)
class Relevance:
    """What ranks one document among the held or rejected ones (smaller sorts first)."""

    held_rank: float = math.inf  # its place in the agent's order of the held documents
    best_position: float = math.inf  # its best position (from 1) in any search's results
    searches: int = 0  # how many searches found it

    def key(self) -> tuple[float, float, int]:
        return (self.held_rank, self.best_position, -self.searches)


@dataclass(frozen=True)
class ListPage:
    """One page of a held or rejected list."""

    rows: list[ReviewedSource]
    number: int
    pages: int
    total: int  # rows in the list, before the filter
    matching: int  # rows the filter keeps

    @property
    def first(self) -> int:
        return (self.number - 1) * PAGE_SIZE + 1 if self.rows else 0

    @property
    def last(self) -> int:
        return self.first + len(self.rows) - 1 if self.rows else 0

    @property
    def previous(self) -> int | None:
        return self.number - 1 if self.number > 1 else None

    @property
    def next(self) -> int | None:
        return self.number + 1 if self.number < self.pages else None


def relevance(investigation: Investigation) -> dict[str, Relevance]:
    """Read each document's relevance from the run's searches and its final ranking."""
    best: dict[str, int] = {}
    found: dict[str, int] = {}
    held_order: dict[str, int] = {}
    kinds = (SearchRan.kind, WarmStartRan.kind, RankingMade.kind)
    for step in investigation.steps.filter(kind__in=kinds).order_by("seq"):
        event = step.event
        if isinstance(event, RankingMade):
            held_order = {key: i for i, key in enumerate(event.held_documents)}
            continue
        if not isinstance(event, SearchRan | WarmStartRan):
            continue
        seen: set[str] = set()
        for position, key in enumerate(event.document_keys, start=1):
            if key in seen:
                continue
            seen.add(key)
            best[key] = min(best.get(key, position), position)
            found[key] = found.get(key, 0) + 1
    keys = set(best) | set(held_order)
    return {key: Relevance(held_rank=held_order.get(key, math.inf),
                           best_position=best.get(key, math.inf), searches=found.get(key, 0))
            for key in keys}


def by_relevance(rows: Sequence[ReviewedSource],
                 ranks: dict[str, Relevance]) -> list[ReviewedSource]:
    """Sort rows most relevant first (the document key breaks ties, so the order is stable)."""
    none = Relevance()
    return sorted(rows, key=lambda row: (*ranks.get(row.document_key, none).key(),
                                         row.document_key))


def _searchable(row: ReviewedSource) -> str:
    parts = [row.document_key, row.sub_corpus, *row.rationales,
             *(note.text for note in row.notes)]
    if row.document is not None:
        parts += [row.document.title, row.document.sub_corpus.name]
    if row.evidence is not None:
        parts.append(row.evidence.text)
    return casefold_without_accents(" ".join(parts))


def matching(rows: Sequence[ReviewedSource], text: str) -> list[ReviewedSource]:
    """Keep the rows holding every word of `text` (case and accents ignored)."""
    words = casefold_without_accents(text).split()
    if not words:
        return list(rows)
    return [row for row in rows if all(word in _searchable(row) for word in words)]


def list_page(rows: Sequence[ReviewedSource], *, text: str = "",
              page: int | None = None) -> ListPage:
    """Filter the (already ranked) rows and cut out one page (the last one when past the end)."""
    kept = matching(rows, text)
    pages = max(1, math.ceil(len(kept) / PAGE_SIZE))
    number = min(max(page or 1, 1), pages)
    start = (number - 1) * PAGE_SIZE
    return ListPage(rows=kept[start:start + PAGE_SIZE], number=number, pages=pages,
                    total=len(rows), matching=len(kept))
