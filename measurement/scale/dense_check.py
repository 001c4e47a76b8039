"""Check filtered dense search: its plan walks the HNSW index, its results match exact search."""

from __future__ import annotations

from django.db import connection, transaction

from common.ranking_metrics import recall_at_k
from common.search import SearchRequest
from measurement.scale.queries import filters
from retrieval.channels.dense import (
    dense_sql,
    embed_query,
    exact_dense_sql,
    get_embedder,
    search_vector,
    use_vector_index,
)

TOP = 10


def dense_plan(question: str, request) -> str:
    """Return the EXPLAIN text of the dense channel's query for ``request``."""
    embedder = get_embedder()
    sql, params = dense_sql(embed_query(question, embedder), request, model_name=embedder.name)
    with transaction.atomic(), connection.cursor() as cursor:
        use_vector_index(cursor)
        cursor.execute("EXPLAIN " + sql, [*params, 40])
        return "\n".join(row[0] for row in cursor.fetchall())


def plan_uses_vector_index(plan: str) -> bool:
    """Say whether a plan walks the HNSW index and reads no chunk row by sequential scan."""
    return "chunk_embedding_hnsw" in plan and "Seq Scan on archive_chunk" not in plan


def _documents(rows: list[tuple[str, float]]) -> list[str]:
    seen: list[str] = []
    for key, _ in sorted(rows, key=lambda r: r[1]):
        if key not in seen:
            seen.append(key)
    return seen[:TOP]


def _exact(vector, request, model: str) -> list[str]:
    sql, params = exact_dense_sql(vector, request, model_name=model)
    with connection.cursor() as cursor:
        cursor.execute(sql, [*params, 400])
        return _documents([(row[2], row[4]) for row in cursor.fetchall()])


def filtered_recall(questions: list[str]) -> dict:
    """Recall@10 of the filtered dense channel against exact search, and its plans."""
    embedder = get_embedder()
    recalls: dict[str, list[float]] = {}
    plans_on_index: dict[str, list[bool]] = {}
    for number, question in enumerate(questions):
        vector = embed_query(question, embedder)
        for where in filters(number):
            request = SearchRequest(channel="dense", query=question, limit=TOP,
                                    sub_corpora=where.sub_corpora, window=where.window)
            found = [h.document_key for h in search_vector(vector, request,
                                                           model_name=embedder.name)]
            exact = _exact(vector, request, embedder.name)
            if exact:
                recalls.setdefault(where.name, []).append(recall_at_k(found, exact, TOP))
            plans_on_index.setdefault(where.name, []).append(
                plan_uses_vector_index(dense_plan(question, request)))
    return {
        name: {"recall_at_10": round(sum(values) / len(values), 4), "queries": len(values),
               "plans_on_hnsw": sum(plans_on_index[name]),
               "plans": len(plans_on_index[name])}
        for name, values in recalls.items()
    }
