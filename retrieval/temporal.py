"""Temporal channel: documents near a target date or inside a window, decaying with distance."""

from __future__ import annotations

import math

from django.conf import settings
from django.db import connection

from retrieval.sql import where_clauses
from retrieval.types import Constraints, DateWindow, Hit

CHANNEL = "temporal"


def decay(distance_days: float, half_life_days: float) -> float:
    """Return exp(-ln2 * distance / half-life): 1 inside the window, 0.5 one half-life away."""
    return math.exp(-math.log(2) * max(distance_days, 0.0) / half_life_days)


def search(
    window: DateWindow, constraints: Constraints, *, half_life_days: float | None = None
) -> list[Hit]:
    """Return up to `cap` dated documents ordered by distance to the window."""
    half_life = half_life_days or settings.TRACE_TEMPORAL_HALF_LIFE_DAYS
    clauses, params = where_clauses(constraints, chunk_level=False)
    clauses.append("d.date IS NOT NULL")
    chunk_filter, chunk_params = "", []
    if constraints.exclude_chunk_ids:
        chunk_filter = "AND NOT (c.id = ANY(%s))"
        chunk_params = [list(constraints.exclude_chunk_ids)]
    # One row per document, represented by its first chunk that is not excluded.
    sql = f"""
        SELECT first.chunk_id, d.id, s.slug || ':' || d.external_id, s.slug,
               CASE WHEN d.date < %s THEN %s - d.date
                    WHEN d.date > %s THEN d.date - %s ELSE 0 END AS distance
        FROM archive_document d
        JOIN archive_subcorpus s ON s.id = d.sub_corpus_id
        JOIN LATERAL (
            SELECT c.id AS chunk_id FROM archive_chunk c
            WHERE c.document_id = d.id {chunk_filter} ORDER BY c.ordinal LIMIT 1
        ) first ON TRUE
        WHERE {" AND ".join(clauses)}
        ORDER BY distance, d.date, d.id
        LIMIT %s
    """
    start, end = window.start, window.end
    with connection.cursor() as cursor:
        cursor.execute(
            sql, [start, start, end, end, *chunk_params, *params, constraints.cap]
        )
        rows = cursor.fetchall()
    return [
        Hit(chunk_id=r[0], document_id=r[1], document_key=r[2], sub_corpus=r[3],
            score=decay(r[4], half_life), rank=rank, channel=CHANNEL)
        for rank, r in enumerate(rows, start=1)
    ]
