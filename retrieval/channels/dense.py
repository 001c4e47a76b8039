"""Dense channel: pgvector cosine distance over chunk embeddings, restrictions in the WHERE."""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Protocol

import numpy as np
from django.db import connection, transaction

from archive.bulk_writes import vector_literal
from archive.embeddings import get_provider
from common.document_keys import document_key_sql
from common.search import Hit, SearchRequest
from retrieval.channels.base import best_chunk_per_document
from retrieval.channels.sql import FROM_CHUNKS, where_sql

CHANNEL = "dense"
# HNSW stops after ef_search candidates; with a WHERE filter that can leave fewer rows than
# asked for. Iterative scans (pgvector >= 0.8) keep scanning until the LIMIT is met.
EF_SEARCH = 200
MAX_SCAN_TUPLES = 50_000


class QueryEmbedder(Protocol):
    """Turn query texts into vectors in the space of the stored chunk embeddings."""

    name: str

    def embed_queries(self, texts: list[str]) -> np.ndarray: ...


_embedder: QueryEmbedder | None = None
_embedder_lock = threading.Lock()


def get_embedder() -> QueryEmbedder:
    """Return this process's query embedder (the configured provider)."""
    global _embedder
    with _embedder_lock:
        if _embedder is None:
            _embedder = get_provider()
        return _embedder


def set_embedder(embedder: QueryEmbedder | None) -> None:
    """Replace the process's query embedder (None resets to the configured provider)."""
    global _embedder
    with _embedder_lock:
        _embedder = embedder
        _query_vectors.clear()


_query_vectors: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
QUERY_CACHE_SIZE = 256


def embed_query(query: str, embedder: QueryEmbedder) -> np.ndarray:
    """Return the query's vector, reusing it across channels and sub-corpus pools."""
    key = (embedder.name, query)
    with _embedder_lock:
        if key in _query_vectors:
            _query_vectors.move_to_end(key)
            return _query_vectors[key]
    vector = np.asarray(embedder.embed_queries([query]), dtype=np.float32)[0]
    with _embedder_lock:
        _query_vectors[key] = vector
        while len(_query_vectors) > QUERY_CACHE_SIZE:
            _query_vectors.popitem(last=False)
    return vector


def _where(request: SearchRequest, model_name: str | None) -> tuple[str, list]:
    extra = ["c.embedding IS NOT NULL"]
    extra_params: list = []
    if model_name is not None:
        # Vectors of another model live in another space: never compare across models.
        extra.append("c.embedding_model = %s")
        extra_params.append(model_name)
    where, params = where_sql(request, *extra)
    return where, [*extra_params, *params]


def dense_sql(vector, request: SearchRequest, *, model_name: str | None) -> tuple[str, list]:
    """Return the nearest-chunks query and its parameters, the LIMIT left as the last one."""
    where, params = _where(request, model_name)
    literal = vector_literal(vector)
    sql = (
        f"SELECT c.id, d.id, {document_key_sql()}, s.slug, "
        f"c.embedding <=> %s::vector AS distance FROM {FROM_CHUNKS} {where} "
        "ORDER BY c.embedding <=> %s::vector LIMIT %s"
    )
    return sql, [literal, *params, literal]


def exact_dense_sql(vector, request: SearchRequest, *,
                    model_name: str | None) -> tuple[str, list]:
    """Return `dense_sql`'s query scored row by row: every matching chunk, no index shortcut."""
    where, params = _where(request, model_name)
    # MATERIALIZED: every matching row is scored, so no index can shortcut the order.
    sql = (
        f"WITH scored AS MATERIALIZED (SELECT c.id AS chunk_id, d.id AS document_id, "
        f"{document_key_sql()} AS key, s.slug, c.embedding <=> %s::vector AS distance "
        f"FROM {FROM_CHUNKS} {where}) "
        "SELECT chunk_id, document_id, key, slug, distance FROM scored "
        "ORDER BY distance, chunk_id LIMIT %s"
    )
    return sql, [vector_literal(vector), *params]


def use_vector_index(cursor) -> None:
    """Make this transaction's nearest-chunk queries walk the HNSW graph, filters included.

    Iterative scans (pgvector >= 0.8) keep walking until the LIMIT is met under a filter. A
    selective filter (one sub-corpus, a decade) would otherwise lead the planner to read every
    matching row and sort them all, which grows with the archive; with sorting priced out, the
    graph's own order is the only way left to serve ORDER BY distance.
    """
    cursor.execute(f"SET LOCAL hnsw.ef_search = {int(EF_SEARCH)}")
    cursor.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
    cursor.execute(f"SET LOCAL hnsw.max_scan_tuples = {int(MAX_SCAN_TUPLES)}")
    cursor.execute("SET LOCAL enable_sort = off")


def search_vector(vector, request: SearchRequest, *, model_name: str | None) -> list[Hit]:
    """Return up to `request.limit` documents nearest to an already embedded query.

    The HNSW walk gives up after `MAX_SCAN_TUPLES` index entries. It comes back short when the
    filter matches few chunks, or when entries of deleted or rolled-back chunks (kept until the
    next vacuum) crowd the query's neighbourhood; the chunks are then scored one by one, which a
    filter that matches few chunks keeps cheap.
    """
    sql, params = dense_sql(vector, request, model_name=model_name)
    exact_sql, exact_params = exact_dense_sql(vector, request, model_name=model_name)

    def fetch_chunks(limit: int) -> list[Hit]:
        with transaction.atomic(), connection.cursor() as cursor:
            use_vector_index(cursor)
            cursor.execute(sql, [*params, limit])
            rows = cursor.fetchall()
        if len(rows) < limit:
            with connection.cursor() as cursor:
                cursor.execute(exact_sql, [*exact_params, limit])
                rows = cursor.fetchall()
        # relaxed_order may return a slightly unordered list: restore the distance order.
        rows.sort(key=lambda r: (r[4], r[0]))
        return [
            Hit(chunk_id=r[0], document_id=r[1], document_key=r[2], sub_corpus=r[3],
                score=1.0 - float(r[4]), rank=0, channel=CHANNEL)
            for r in rows
        ]

    return best_chunk_per_document(fetch_chunks, request.limit)


@dataclass(frozen=True)
class DenseChannel:
    """Rank documents by their chunk nearest to the embedded query; the date window is a filter.

    `embedder` defaults to this process's configured query embedder (see `set_embedder`).
    """

    embedder: QueryEmbedder | None = None
    name: str = CHANNEL

    def search(self, request: SearchRequest) -> list[Hit]:
        """Return up to `request.limit` documents ranked by their nearest chunk to the query."""
        embedder = self.embedder or get_embedder()
        vector = embed_query(request.query, embedder)
        return search_vector(vector, request, model_name=embedder.name)
