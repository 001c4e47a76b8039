"""Translate a SearchRequest's restrictions into the WHERE clauses of the Postgres channels."""

from __future__ import annotations

from common.document_keys import document_key_sql
from common.search import SearchRequest

# Aliases in every channel query: c = archive_chunk, d = archive_document, s = archive_subcorpus.
FROM_CHUNKS = (
    "archive_chunk c JOIN archive_document d ON d.id = c.document_id "
    "JOIN archive_subcorpus s ON s.id = d.sub_corpus_id"
)


def where_clauses(
    request: SearchRequest, *, chunk_level: bool = True, window_filter: bool = True
) -> tuple[list[str], list]:
    """Return WHERE fragments and their parameters for the request's restrictions.

    `chunk_level=False` leaves out the chunk exclusions (a query without the chunk alias);
    `window_filter=False` leaves out the date window (the temporal channel ranks by it instead).
    """
    clauses: list[str] = []
    params: list = []
    if request.sub_corpora is not None:
        clauses.append("s.slug = ANY(%s)")
        params.append(list(request.sub_corpora))
    if request.document_ids is not None:
        clauses.append("d.id = ANY(%s)")
        params.append(list(request.document_ids))
    if request.exclude_document_keys:
        clauses.append(f"NOT ({document_key_sql()} = ANY(%s))")
        params.append(list(request.exclude_document_keys))
    if chunk_level and request.exclude_chunk_ids:
        clauses.append("NOT (c.id = ANY(%s))")
        params.append(list(request.exclude_chunk_ids))
    if window_filter and request.window is not None:
        clauses.append("d.date BETWEEN %s AND %s")
        params.extend([request.window.start, request.window.end])
    return clauses, params


def where_sql(request: SearchRequest, *extra: str) -> tuple[str, list]:
    """Return a full `WHERE ...` string (or empty) over chunks, plus parameters."""
    clauses, params = where_clauses(request)
    clauses = [*extra, *clauses]
    return ("WHERE " + " AND ".join(clauses)) if clauses else "", params
