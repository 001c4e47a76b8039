"""The substring channel's way through Postgres: chunk words in `retrieval_chunk_words` (GIN).

Used when the BM25 engine holds no words (whoosh). Every chunk holding a variant of a query word
is scored in SQL, so a query's cost grows with the archive; `substring_index` scores in the
Tantivy index instead.
"""

from __future__ import annotations

from django.db import connection, transaction

from common.document_keys import document_key_sql
from common.search import Hit, SearchRequest
from retrieval.channels.sql import FROM_CHUNKS, where_sql
from retrieval.channels.substring_terms import VARIANTS_SQL, SubstringQuery, set_word_floor

_SQL = """
WITH variant AS (
{variants}
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


def _named_where(request: SearchRequest) -> tuple[str, dict]:
    """Return the request's WHERE clause with named placeholders, to mix with the query's."""
    where, values = where_sql(request)
    names = [f"restriction_{i}" for i in range(len(values))]
    where = where.replace("%s", "{}").format(*(f"%({name})s" for name in names))
    return where, dict(zip(names, values, strict=True))


def chunk_hits(query: SubstringQuery, request: SearchRequest, limit: int,
               channel: str) -> list[Hit]:
    """Return the best ``limit`` chunks: exact matches first (score 1 + fuzzy), then fuzzy."""
    where, where_params = _named_where(request)
    sql = _SQL.format(variants=VARIANTS_SQL, from_chunks=FROM_CHUNKS,
                      document_key=document_key_sql(), where=where,
                      exact_floor=_EXACT_FLOOR[query.mode], fuzzy_match=_FUZZY_MATCH[query.mode])
    with transaction.atomic(), connection.cursor() as cursor:
        set_word_floor(cursor, query)
        cursor.execute(sql, {**query.sql_params(), **where_params, "limit": limit})
        rows = cursor.fetchall()
    return [Hit(chunk_id=r[0], document_id=r[1], document_key=r[2], sub_corpus=r[3],
                score=float(r[4]), rank=0, channel=channel) for r in rows]
