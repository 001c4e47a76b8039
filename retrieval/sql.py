"""Translate Constraints into SQL WHERE clauses shared by the Postgres channels."""

from __future__ import annotations

from retrieval.types import Constraints

# Aliases in every channel query: c = archive_chunk, d = archive_document, s = archive_subcorpus.
FROM_CHUNKS = (
    "archive_chunk c JOIN archive_document d ON d.id = c.document_id "
    "JOIN archive_subcorpus s ON s.id = d.sub_corpus_id"
)


def where_clauses(constraints: Constraints, *, chunk_level: bool = True) -> tuple[list[str], list]:
    """Return WHERE fragments and their parameters for the given constraints."""
    clauses: list[str] = []
    params: list = []
    if constraints.sub_corpora is not None:
        clauses.append("s.slug = ANY(%s)")
        params.append(list(constraints.sub_corpora))
    if constraints.document_ids is not None:
        clauses.append("d.id = ANY(%s)")
        params.append(list(constraints.document_ids))
    if constraints.exclude_document_ids:
        clauses.append("NOT (d.id = ANY(%s))")
        params.append(list(constraints.exclude_document_ids))
    if constraints.exclude_document_keys:
        clauses.append("NOT ((s.slug || ':' || d.external_id) = ANY(%s))")
        params.append(list(constraints.exclude_document_keys))
    if chunk_level and constraints.exclude_chunk_ids:
        clauses.append("NOT (c.id = ANY(%s))")
        params.append(list(constraints.exclude_chunk_ids))
    if constraints.date_window is not None:
        clauses.append("d.date BETWEEN %s AND %s")
        params.extend([constraints.date_window.start, constraints.date_window.end])
    return clauses, params


def where_sql(constraints: Constraints, *extra: str, chunk_level: bool = True) -> tuple[str, list]:
    """Return a full `WHERE ...` string (or empty) plus parameters."""
    clauses, params = where_clauses(constraints, chunk_level=chunk_level)
    clauses = [*extra, *clauses]
    return ("WHERE " + " AND ".join(clauses)) if clauses else "", params


def chunk_fetch_limit(cap: int) -> int:
    """Return how many chunk rows to fetch so max-pooling still yields `cap` documents."""
    return max(cap * 4, 40)
