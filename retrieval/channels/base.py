"""What every channel offers, and the best-chunk-per-document loop of the chunk-level channels."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from common.search import Hit, SearchRequest
from retrieval.fusion import max_pool


class Channel(Protocol):
    """One way of finding documents: `search` returns up to `request.limit` of them, ranked from 1.

    A channel applies every restriction of the request inside its own query, and returns each
    document once, represented by its best chunk, without passage text.
    """

    @property
    def name(self) -> str:
        """The channel's registered name (also its key in `Hit.channel_ranks`)."""
        ...

    def search(self, request: SearchRequest) -> list[Hit]: ...


def chunk_fetch_limit(limit: int) -> int:
    """Return how many chunk rows to fetch first so max-pooling still yields `limit` documents."""
    return max(limit * 4, 40)


def best_chunk_per_document(fetch_chunks: Callable[[int], list[Hit]], limit: int) -> list[Hit]:
    """Return up to `limit` documents, each by its best-scoring chunk, ranked from 1.

    `fetch_chunks(n)` returns the n best chunk hits (or fewer when no more match). Several chunks
    of one document can crowd the top rows, so the fetch grows fourfold until `limit` distinct
    documents are found or the channel has nothing more to give.
    """
    fetch = chunk_fetch_limit(limit)
    while True:
        chunks = fetch_chunks(fetch)
        documents = max_pool(chunks, cap=limit)
        if len(documents) >= limit or len(chunks) < fetch:
            return documents
        fetch *= 4
