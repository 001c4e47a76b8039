"""Temporal channel: documents near a target date or inside a window, decaying with distance."""

from __future__ import annotations

import math
from dataclasses import dataclass

from django.conf import settings
from django.db import connection

from common.document_keys import document_key_sql
from common.search import Hit, SearchRequest
from retrieval.channels.sql import where_clauses
from retrieval.fusion import ranked

CHANNEL = "temporal"


def decay(distance_days: float, half_life_days: float) -> float:
    """Return exp(-ln2 * distance / half-life): 1 inside the window, 0.5 one half-life away."""
    return math.exp(-math.log(2) * max(distance_days, 0.0) / half_life_days)


@dataclass(frozen=True)
class TemporalChannel:
    """Rank dated documents by their distance to `request.window`; the query text is not read.

    `half_life_days` defaults to the TRACE_TEMPORAL_HALF_LIFE_DAYS setting.
    """

    half_life_days: float | None = None
    name: str = CHANNEL

    def search(self, request: SearchRequest) -> list[Hit]:
        """Return up to `request.limit` dated documents ordered by distance to the window."""
        if request.window is None:
            raise ValueError("a temporal search needs a date window")
        half_life = self.half_life_days or settings.TRACE_TEMPORAL_HALF_LIFE_DAYS
        # The window is what this channel ranks by, not a filter.
        clauses, params = where_clauses(request, chunk_level=False, window_filter=False)
        chunk_filter, chunk_params = "", []
        if request.exclude_chunk_ids:
            chunk_filter = "AND NOT (c.id = ANY(%s))"
            chunk_params = [list(request.exclude_chunk_ids)]
        # Three walks of the date index, each stopping after `limit` documents: inside the
        # window, backwards from its start, forwards from its end. The nearest `limit` documents
        # are among them, so the archive is never scanned whole. Each document is represented
        # by its first chunk that is not excluded.
        part = f"""(
            SELECT first.chunk_id, d.id, {document_key_sql()} AS key, s.slug, d.date
            FROM archive_document d
            JOIN archive_subcorpus s ON s.id = d.sub_corpus_id
            JOIN LATERAL (
                SELECT c.id AS chunk_id FROM archive_chunk c
                WHERE c.document_id = d.id {chunk_filter} ORDER BY c.ordinal LIMIT 1
            ) first ON TRUE
            WHERE {" AND ".join([*clauses, "{side}"])}
            ORDER BY {{order}}
            LIMIT %s
        )"""
        sides = [("d.date BETWEEN %s AND %s", "d.date, d.id", [request.window.start,
                                                               request.window.end]),
                 ("d.date < %s", "d.date DESC, d.id", [request.window.start]),
                 ("d.date > %s", "d.date, d.id", [request.window.end])]
        parts, part_params = [], []
        for side, order, side_params in sides:
            parts.append(part.replace("{side}", side).format(order=order))
            part_params += [*chunk_params, *params, *side_params, request.limit]
        sql = f"""
            SELECT chunk_id, id, key, slug,
                   CASE WHEN date < %s THEN %s - date WHEN date > %s THEN date - %s ELSE 0 END
                       AS distance
            FROM ({" UNION ALL ".join(parts)}) near
            ORDER BY distance, date, id
            LIMIT %s
        """
        start, end = request.window.start, request.window.end
        with connection.cursor() as cursor:
            cursor.execute(sql, [start, start, end, end, *part_params, request.limit])
            rows = cursor.fetchall()
        return ranked(
            Hit(chunk_id=r[0], document_id=r[1], document_key=r[2], sub_corpus=r[3],
                score=decay(r[4], half_life), rank=0, channel=self.name)
            for r in rows
        )
