"""Substring channel: exact phrase (accent-insensitive) and OCR-tolerant trigram matching."""

from __future__ import annotations

from django.db import connection, transaction

from retrieval.fusion import max_pool
from retrieval.sql import FROM_CHUNKS, chunk_fetch_limit, where_sql
from retrieval.types import Constraints, Hit

CHANNEL = "substring"
MODES = ("auto", "exact", "fuzzy")
# pg_trgm's default (0.6) misses OCR damage such as "laChanbre des dépntés" (0.45): glued
# words plus two broken letters. Results are ranked by similarity, so a lower bar costs little.
FUZZY_THRESHOLD = 0.4


def like_pattern(phrase: str) -> str:
    """Return an ILIKE pattern matching the phrase anywhere, with wildcards escaped."""
    escaped = phrase.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def search(
    phrase: str,
    constraints: Constraints,
    *,
    mode: str = "auto",
    threshold: float = FUZZY_THRESHOLD,
) -> list[Hit]:
    """Return up to `cap` documents containing the phrase exactly (first) or approximately."""
    if mode not in MODES:
        raise ValueError(f"unknown substring mode {mode!r}; expected one of {MODES}")
    phrase = " ".join(phrase.split())
    if not phrase:
        return []
    exact = "unaccent(c.text) ILIKE unaccent(%s)"
    # `%s <% c.text` is word_similarity above the threshold; it uses the GIN trigram index.
    fuzzy = "%s <%% c.text"
    match = {"exact": exact, "fuzzy": fuzzy, "auto": f"({exact} OR {fuzzy})"}[mode]
    match_params = {"exact": [like_pattern(phrase)], "fuzzy": [phrase],
                    "auto": [like_pattern(phrase), phrase]}[mode]
    where, params = where_sql(constraints, match)
    limit = chunk_fetch_limit(constraints.cap)
    while True:
        sql = (
            "SELECT c.id, d.id, s.slug || ':' || d.external_id, s.slug, "
            "(CASE WHEN unaccent(c.text) ILIKE unaccent(%s) THEN 1.0 ELSE 0.0 END) "
            "+ word_similarity(%s, c.text) AS score "
            f"FROM {FROM_CHUNKS} {where} ORDER BY score DESC, c.id LIMIT %s"
        )
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(f"SET LOCAL pg_trgm.word_similarity_threshold = {float(threshold)}")
            cursor.execute(
                sql, [like_pattern(phrase), phrase, *match_params, *params, limit]
            )
            rows = cursor.fetchall()
        hits = [
            Hit(chunk_id=r[0], document_id=r[1], document_key=r[2], sub_corpus=r[3],
                score=float(r[4]), rank=0, channel=CHANNEL)
            for r in rows
        ]
        pooled = max_pool(hits, cap=constraints.cap)
        if len(pooled) >= constraints.cap or len(rows) < limit:
            return pooled
        limit *= 4
