"""Substring channel: exact phrase (accent-insensitive) and OCR-tolerant trigram matching.

Matching goes through the vocabulary of folded chunk words (`retrieval.vocabulary`) rather than
computing trigram similarity over whole 1,000-word chunks. Each query word is mapped to its close
variants there (pg_trgm word similarity on a small indexed table), and the variants to the chunks
holding them (GIN index on each chunk's words); a chunk's fuzzy score is the
mean over query words, weighted by their trigram counts as pg_trgm does, of the best variant it
holds. Exact-phrase candidates are the chunks holding every (long enough) query word inside one of
their words; a phrase of several words or with punctuation is then checked on those chunks only.
Score: 1 for an exact match, plus the fuzzy score.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import connection, transaction

from common.document_keys import document_key_sql
from common.search import Hit, SearchRequest
from common.sql import like_pattern
from retrieval import vocabulary
from retrieval.channels.base import best_chunk_per_document
from retrieval.channels.sql import FROM_CHUNKS, where_sql

CHANNEL = "substring"
MODES = ("auto", "exact", "fuzzy")
# pg_trgm's default (0.6) misses OCR damage such as "dépntés" for "députés" (0.45). Results are
# ranked by similarity, so a lower bar costs little.
FUZZY_THRESHOLD = 0.4
# Per-word bar for variants: lower than the phrase threshold, because a badly damaged word
# ("laChanbre", 0.27 against "chambre") still adds to a phrase whose other words match well.
WORD_FLOOR = 0.25
# Words shorter than this match only themselves: trigram variants of "des" or "la" are noise.
MIN_FUZZY_LENGTH = 4
# Close variants kept per query word: enough for OCR damage, bounded for very common words.
MAX_VARIANTS = 50

_SQL = """
WITH q AS (
    SELECT word, n, length(word) + 1.0 AS weight
    FROM unnest(%(words)s::text[]) WITH ORDINALITY AS q(word, n)
), variant AS (
    SELECT q.n, q.weight, v.word, v.sim
    FROM q CROSS JOIN LATERAL (
        SELECT vw.word, 1.0::real AS sim
        FROM retrieval_vocabulary vw
        WHERE length(q.word) < %(min_fuzzy_length)s AND vw.word = q.word
        UNION ALL
        (SELECT vw.word, word_similarity(q.word, vw.word) AS sim
         FROM retrieval_vocabulary vw
         WHERE length(q.word) >= %(min_fuzzy_length)s AND q.word <%% vw.word
         ORDER BY sim DESC, vw.word
         LIMIT %(max_variants)s)
    ) v
), fuzzy AS (
    SELECT chunk_id, sum(weight * sim) / %(total_weight)s AS score
    FROM (
        SELECT cw.chunk_id, variant.n, variant.weight, max(variant.sim) AS sim
        FROM variant JOIN retrieval_chunk_words cw ON cw.words @> ARRAY[variant.word]
        GROUP BY cw.chunk_id, variant.n, variant.weight
    ) best
    GROUP BY chunk_id
), containing AS (
    SELECT chunk_id
    FROM (
        SELECT DISTINCT k.n, cw.chunk_id
        FROM unnest(%(contain_words)s::text[]) WITH ORDINALITY AS k(word, n)
        CROSS JOIN LATERAL (
            SELECT array_agg(vw.word) AS words FROM retrieval_vocabulary vw
            WHERE vw.word LIKE '%%' || k.word || '%%'
        ) holding
        JOIN retrieval_chunk_words cw ON cw.words && holding.words
    ) hit
    GROUP BY chunk_id
    HAVING count(*) = cardinality(%(contain_words)s::text[])
), candidate AS (
    SELECT coalesce(f.chunk_id, x.chunk_id) AS chunk_id, coalesce(f.score, 0.0) AS fuzzy,
           x.chunk_id IS NOT NULL AS containing
    FROM fuzzy f FULL JOIN containing x ON x.chunk_id = f.chunk_id
), scored AS (
    SELECT c.id AS chunk_id, d.id AS document_id, {document_key} AS document_key,
           s.slug, x.fuzzy, x.containing, c.text
    FROM {from_chunks} JOIN candidate x ON x.chunk_id = c.id
    {where}
), by_fuzzy AS (
    SELECT * FROM scored WHERE containing {exact_floor}
    ORDER BY fuzzy DESC, chunk_id
    OFFSET 0  -- a fence: the phrase check below runs in this order and stops at the limit
), exact_top AS (
    SELECT chunk_id, document_id, document_key, slug, 1.0 + fuzzy AS score
    FROM by_fuzzy
    WHERE %(one_word)s OR unaccent(text) ILIKE unaccent(%(pattern)s)
    LIMIT %(limit)s
), fuzzy_top AS (
    SELECT chunk_id, document_id, document_key, slug, fuzzy AS score
    FROM scored
    WHERE {fuzzy_match} AND chunk_id NOT IN (SELECT chunk_id FROM exact_top)
    ORDER BY fuzzy DESC, chunk_id
    LIMIT %(limit)s
)
SELECT chunk_id, document_id, document_key, slug, score
FROM (SELECT * FROM exact_top UNION ALL SELECT * FROM fuzzy_top) found
ORDER BY score DESC, chunk_id
LIMIT %(limit)s
"""
# Per mode: which phrase matches count (an exact match in fuzzy mode must also reach the
# threshold), and which chunks without the phrase are kept.
_EXACT_FLOOR = {"exact": "", "fuzzy": "AND fuzzy >= %(threshold)s", "auto": ""}
_FUZZY_MATCH = {"exact": "false", "fuzzy": "fuzzy >= %(threshold)s",
                "auto": "fuzzy >= %(threshold)s"}


def containing_words(words: list[str]) -> list[str]:
    """Return the query words that select exact-phrase candidates.

    Every word must occur inside some chunk word; short words occur almost everywhere and only
    cost time, so they are left to the phrase check unless nothing longer is.
    """
    long_words = [word for word in words if len(word) >= MIN_FUZZY_LENGTH]
    return long_words or [max(words, key=len)]


def _named_where(request: SearchRequest) -> tuple[str, dict]:
    """Return the request's WHERE clause with named placeholders, to mix with the query's."""
    where, values = where_sql(request)
    names = [f"restriction_{i}" for i in range(len(values))]
    where = where.replace("%s", "{}").format(*(f"%({name})s" for name in names))
    return where, dict(zip(names, values, strict=True))


@dataclass(frozen=True)
class SubstringChannel:
    """Documents holding the query phrase exactly (first) or approximately; see the module doc.

    `request.mode` picks exact matches, fuzzy ones or both (auto); the window is a filter.
    """

    threshold: float = FUZZY_THRESHOLD
    name: str = CHANNEL

    def search(self, request: SearchRequest) -> list[Hit]:
        """Return up to `request.limit` documents by their best matching chunk."""
        if request.mode not in MODES:
            raise ValueError(f"unknown substring mode {request.mode!r}; expected one of {MODES}")
        phrase = " ".join(request.query.split())
        if not phrase:
            return []
        folded, words = vocabulary.fold_query(phrase)
        if not words:
            return []
        where, where_params = _named_where(request)
        params = {
            **where_params,
            "words": words,
            "contain_words": containing_words(words),
            "total_weight": float(sum(len(word) + 1 for word in words)),
            "max_variants": MAX_VARIANTS,
            "min_fuzzy_length": MIN_FUZZY_LENGTH,
            # A single word of letters and digits is inside a chunk word or nowhere: no text check.
            "one_word": folded == words[0],
            "pattern": like_pattern(phrase),
            "threshold": float(self.threshold),
        }
        sql = _SQL.format(from_chunks=FROM_CHUNKS, document_key=document_key_sql(), where=where,
                          exact_floor=_EXACT_FLOOR[request.mode],
                          fuzzy_match=_FUZZY_MATCH[request.mode])
        word_floor = min(float(self.threshold), WORD_FLOOR)

        def fetch_chunks(limit: int) -> list[Hit]:
            with transaction.atomic(), connection.cursor() as cursor:
                cursor.execute(f"SET LOCAL pg_trgm.word_similarity_threshold = {word_floor}")
                cursor.execute(sql, {**params, "limit": limit})
                rows = cursor.fetchall()
            return [
                Hit(chunk_id=r[0], document_id=r[1], document_key=r[2], sub_corpus=r[3],
                    score=float(r[4]), rank=0, channel=self.name)
                for r in rows
            ]

        return best_chunk_per_document(fetch_chunks, request.limit)
