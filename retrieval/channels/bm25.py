"""BM25 channel: reads the chunk index kept current by the indexer; a query never builds it."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from common.search import Hit, SearchRequest
from retrieval.analysis import DEFAULT_OPTIONS, AnalyzerOptions
from retrieval.bm25 import store
from retrieval.bm25.base import IndexCorrupt
from retrieval.channels.base import best_chunk_per_document

logger = logging.getLogger(__name__)

CHANNEL = "bm25"
K1 = store.K1
B = store.B


@dataclass(frozen=True)
class Bm25Channel:
    """Rank documents by their best chunk's BM25 score; the date window is a filter.

    Answers from the index's last commit; with no index yet (before the first start-up or
    ingest built it) it finds nothing and says so in the log.
    """

    options: AnalyzerOptions = DEFAULT_OPTIONS
    k1: float = K1
    b: float = B
    name: str = CHANNEL
    engine: str | None = None  # None: TRACE_BM25_ENGINE

    def search(self, request: SearchRequest) -> list[Hit]:
        """Return up to `request.limit` documents ranked by their best chunk's BM25 score."""
        if (request.sub_corpora is not None and not request.sub_corpora) or (
            request.document_ids is not None and not request.document_ids
        ):
            return []
        index = store.opened(self.options, self.engine, self.k1, self.b)

        def fetch_chunks(limit: int) -> list[Hit]:
            try:
                matches = index.search(request.query, request, limit)
            except IndexCorrupt as exc:
                logger.warning("BM25 index not available, no BM25 results: %s", exc)
                return []
            return [Hit(chunk_id=m.chunk_id, document_id=m.document_id,
                        document_key=m.document_key, sub_corpus=m.sub_corpus, score=m.score,
                        rank=0, channel=self.name) for m in matches]

        return best_chunk_per_document(fetch_chunks, request.limit)


def clear_cache() -> None:
    """Close every open index of this process (tests and index maintenance)."""
    store.close_all()
