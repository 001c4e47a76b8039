"""The substring channel's way through the Tantivy index, which holds every chunk's folded words.

The variants and the words holding a required word come from the vocabulary (Postgres, trigram
index); the index scores the chunks holding them (`WordIndex.word_search`), so a query reads the
postings of its variants only and keeps the best chunks, with no score computed in SQL. Exact
candidates come in fuzzy order, in growing pages; a phrase of several words is checked in the
text of each page's chunks, up to `PHRASE_CHECK_LIMIT` candidates.
"""

from __future__ import annotations

from dataclasses import replace

from django.db import connection

from common.search import Hit, SearchRequest
from retrieval.bm25.base import ChunkMatch, WordIndex, WordQuery
from retrieval.channels.substring_terms import SubstringQuery, holding_words, variants

# Chunks holding every required word whose text is checked for the phrase, best fuzzy score
# first: past them a chunk is not looked at for the exact phrase (it can still match fuzzily).
PHRASE_CHECK_LIMIT = 2_000
_FIRST_PAGE = 100


def _holding_phrase(chunk_ids: list[int], pattern: str) -> set[int]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT id FROM archive_chunk WHERE id = ANY(%s) "
            "AND unaccent(text) ILIKE unaccent(%s)", [chunk_ids, pattern])
        return {row[0] for row in cursor.fetchall()}


def _exact(index: WordIndex, query: SubstringQuery, word_query: WordQuery,
           request: SearchRequest, limit: int) -> list[ChunkMatch]:
    """Return up to ``limit`` chunks holding the phrase, best fuzzy score first."""
    found: list[ChunkMatch] = []
    offset, page = 0, max(limit, _FIRST_PAGE)
    while len(found) < limit and offset < PHRASE_CHECK_LIMIT:
        page = min(page, PHRASE_CHECK_LIMIT - offset)
        matches = index.word_search(word_query, request, page, offset)
        kept = matches if query.mode != "fuzzy" else [
            m for m in matches if m.score >= query.threshold]
        if query.one_word:
            found += kept
        elif kept:
            holding = _holding_phrase([m.chunk_id for m in kept], query.pattern)
            found += [m for m in kept if m.chunk_id in holding]
        if len(matches) < page or len(kept) < len(matches):
            break  # no more candidates, or the rest score under the threshold
        offset += page
        page *= 2
    return found[:limit]


def chunk_hits(index: WordIndex, query: SubstringQuery, request: SearchRequest, limit: int,
               channel: str) -> list[Hit]:
    """Return the best ``limit`` chunks: exact matches first (score 1 + fuzzy), then fuzzy."""
    scored = tuple(tuple(word_variants) for word_variants in variants(query))
    exact = _exact(index, query, WordQuery(scored, tuple(map(tuple, holding_words(query)))),
                   request, limit)
    ranked = [(1.0 + m.score, m) for m in exact]
    if query.mode != "exact" and any(scored):
        others = replace(request, exclude_chunk_ids=(
            *request.exclude_chunk_ids, *(m.chunk_id for m in exact)))
        ranked += [(m.score, m) for m in index.word_search(WordQuery(scored), others, limit)
                   if m.score >= query.threshold]
    ranked.sort(key=lambda item: (-item[0], item[1].chunk_id))
    return [Hit(chunk_id=m.chunk_id, document_id=m.document_id, document_key=m.document_key,
                sub_corpus=m.sub_corpus, score=score, rank=0, channel=channel)
            for score, m in ranked[:limit]]
