"""Give chunks still lacking a vector of a provider one.

``chunks_embed`` embeds a few documents' chunks in small locked batches (after an ingest, and in
the task ``archive.embed_document`` after an OCR correction); ``chunks_embed_bulk`` embeds every
such chunk in bulk, in worker processes: the path after a plain load.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future

import numpy as np
from django.db import connection, transaction
from django.db.models import Q

from archive.bulk_writes import vector_literal
from archive.chunking import content_sha256
from archive.embeddings.base import EmbeddingProvider
from archive.embeddings.cache import cache_keep_displaced, cache_release, known_vectors
from archive.embeddings.pool import EmbeddingPool
from archive.models import Chunk

PAGE = 2000


def chunks_embed(
    *, provider: EmbeddingProvider, document_ids: list[int] | None = None, batch_size: int = 64,
    on_embedded: Callable[[int], object] | None = None,
) -> tuple[int, int]:
    """Embed chunks lacking a vector from ``provider``: (chunks embedded, vectors computed).

    Marks nothing in the index outbox: no derived index reads vectors (the HNSW index lives in
    Postgres and follows the rows in the same transaction).
    """
    stale = Chunk.objects.filter(Q(embedding__isnull=True) | ~Q(embedding_model=provider.name))
    if document_ids is not None:
        stale = stale.filter(document_id__in=document_ids)
    ids = list(stale.order_by("pk").values_list("pk", flat=True))
    embedded = computed = 0
    for i in range(0, len(ids), batch_size):
        with transaction.atomic():
            chunks = list(Chunk.objects.select_for_update().filter(pk__in=ids[i : i + batch_size]))
            # Another provider's vectors move to the cache table, so switching back reuses them.
            cache_keep_displaced([c.pk for c in chunks], provider.name)
            for chunk in chunks:
                chunk.content_hash = chunk.content_hash or content_sha256(chunk.text)
            found, from_table = known_vectors(provider.name, [c.content_hash for c in chunks])
            missing = list(dict.fromkeys(c.text for c in chunks
                                         if c.content_hash not in found))
            if missing:
                vectors = provider.embed_passages(missing)
                found.update((content_sha256(t), v)
                             for t, v in zip(missing, vectors, strict=True))
            for chunk in chunks:
                chunk.embedding = found[chunk.content_hash]
                chunk.embedding_model = provider.name
            Chunk.objects.bulk_update(chunks, ["embedding", "embedding_model", "content_hash"])
            cache_release(provider.name, from_table)
            embedded += len(chunks)
            computed += len(missing)
            if on_embedded:
                on_embedded(len(chunks))
    return embedded, computed


def _stale_page(model: str, after: int) -> list[tuple[int, str, str]]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT id, content_hash, text FROM archive_chunk WHERE id > %s "
            "AND (embedding IS NULL OR embedding_model <> %s) ORDER BY id LIMIT %s",
            [after, model, PAGE],
        )
        return cursor.fetchall()


def _write_vectors(rows: list[tuple[int, np.ndarray]], model: str) -> None:
    with transaction.atomic(), connection.cursor() as cursor:
        # Another provider's vectors move to the cache table, so switching back reuses them.
        cache_keep_displaced([chunk_id for chunk_id, _ in rows], model)
        cursor.execute("CREATE TEMP TABLE chunk_vectors (id bigint, embedding vector) "
                       "ON COMMIT DROP")
        with cursor.copy("COPY chunk_vectors (id, embedding) FROM STDIN") as copy:
            for chunk_id, vector in rows:
                copy.write_row([chunk_id, vector_literal(vector)])
        cursor.execute(
            "UPDATE archive_chunk c SET embedding = v.embedding, embedding_model = %s "
            "FROM chunk_vectors v WHERE c.id = v.id", [model],
        )


def chunks_embed_bulk(
    *, provider: EmbeddingProvider, workers: int = 0,
    on_embedded: Callable[[int], object] | None = None,
) -> tuple[int, float]:
    """Give every chunk lacking a ``provider`` vector one: (chunks embedded, seconds).

    Pages of chunks are embedded in ``workers`` processes while earlier pages are written, each
    page in its own transaction, so an interrupted run continues where it stopped.
    """
    started = time.perf_counter()
    embedded = 0
    in_flight: deque[tuple[list[int], list[str], dict[str, np.ndarray], list[Future]]] = deque()

    def write_oldest() -> None:
        nonlocal embedded
        ids, hashes, known, futures = in_flight.popleft()
        computed = iter(EmbeddingPool.gather(futures))
        vectors = {h: known[h] if h in known else next(computed) for h in dict.fromkeys(hashes)}
        _write_vectors([(i, vectors[h]) for i, h in zip(ids, hashes, strict=True)], provider.name)
        embedded += len(ids)
        if on_embedded:
            on_embedded(len(ids))

    with EmbeddingPool(provider, workers) as pool:
        after = 0
        while page := _stale_page(provider.name, after):
            after = page[-1][0]
            ids = [row[0] for row in page]
            hashes = [row[1] for row in page]
            known, _ = known_vectors(provider.name, hashes)
            texts = {h: text for _, h, text in page if h not in known}
            in_flight.append((ids, hashes, known, pool.submit(list(texts.values()))))
            while len(in_flight) > max(workers, 1):
                write_oldest()
        while in_flight:
            write_oldest()
    return embedded, time.perf_counter() - started
