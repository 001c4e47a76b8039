"""Substring channel: exact phrase (accent-insensitive) and OCR-tolerant trigram matching.

Matching goes through the vocabulary of folded chunk words (`retrieval.vocabulary`) rather than
computing trigram similarity over whole 1,000-word chunks; `substring_terms` says how a query is
read and scored. The chunks are found and scored in the Tantivy index when it holds the chunks'
words (`substring_index`, the default engine), else in Postgres (`substring_sql`, whoosh).
Score: 1 for an exact match, plus the fuzzy score.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from common.search import Hit, SearchRequest
from retrieval.bm25 import store
from retrieval.bm25.base import IndexCorrupt, WordIndex
from retrieval.channels import substring_index, substring_sql
from retrieval.channels.base import best_chunk_per_document
from retrieval.channels.substring_terms import FUZZY_THRESHOLD, SubstringQuery

logger = logging.getLogger(__name__)

CHANNEL = "substring"


@dataclass(frozen=True)
class SubstringChannel:
    """Documents holding the query phrase exactly (first) or approximately; see the module doc.

    `request.mode` picks exact matches, fuzzy ones or both (auto); the window is a filter.
    `through_index=False` always takes the Postgres way (to compare the two).
    """

    threshold: float = FUZZY_THRESHOLD
    name: str = CHANNEL
    through_index: bool = True

    def search(self, request: SearchRequest) -> list[Hit]:
        """Return up to `request.limit` documents by their best matching chunk."""
        query = SubstringQuery.parse(request.query, request.mode, self.threshold)
        if query is None:
            return []
        index = store.opened() if self.through_index else None
        # A word index not built yet raises IndexCorrupt on its first read: Postgres answers.
        if isinstance(index, WordIndex):
            word_index = index

            def fetch_chunks(limit: int) -> list[Hit]:
                try:
                    return substring_index.chunk_hits(word_index, query, request, limit,
                                                      self.name)
                except IndexCorrupt as exc:
                    logger.warning("word index not readable, substring through SQL: %s", exc)
                    return substring_sql.chunk_hits(query, request, limit, self.name)
        else:
            def fetch_chunks(limit: int) -> list[Hit]:
                return substring_sql.chunk_hits(query, request, limit, self.name)

        return best_chunk_per_document(fetch_chunks, request.limit)
