"""Reuse vectors by content hash: each (content, provider) pair is embedded once.

One copy of each vector is kept. Chunks hold the vectors of the archive's text; the
``EmbeddingCache`` table holds only vectors no chunk holds: passages embedded outside an ingest,
and a chunk's vector displaced when the chunk is embedded with another provider (so switching
back reuses it). Lookups read the chunks first, then the table.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import numpy as np
from django.db import connection

from archive.chunking import content_sha256
from archive.embeddings.base import EmbeddingProvider
from archive.models import EMBEDDING_DIMENSIONS, Chunk, EmbeddingCache

LOOKUP_BATCH = 1000


def known_vectors(model: str, hashes: Iterable[str]) -> tuple[dict[str, np.ndarray], set[str]]:
    """Return (vectors found for ``hashes``, the hashes among them found in the cache table)."""
    wanted = list(dict.fromkeys(hashes))
    found: dict[str, np.ndarray] = {}
    for i in range(0, len(wanted), LOOKUP_BATCH):
        rows = Chunk.objects.filter(
            content_hash__in=wanted[i : i + LOOKUP_BATCH], embedding_model=model,
            embedding__isnull=False,
        ).order_by().values_list("content_hash", "embedding")
        found.update((h, np.asarray(v, dtype=np.float32)) for h, v in rows)
    missing = [h for h in wanted if h not in found]
    from_table: set[str] = set()
    for i in range(0, len(missing), LOOKUP_BATCH):
        cached = EmbeddingCache.objects.filter(
            model=model, content_hash__in=missing[i : i + LOOKUP_BATCH]
        ).values_list("content_hash", "vector")
        for h, v in cached:
            found[h] = np.asarray(v, dtype=np.float32)
            from_table.add(h)
    return found, from_table


def cache_release(model: str, hashes: Iterable[str]) -> None:
    """Drop table rows whose vectors chunks now hold (they would be a second copy)."""
    hashes = list(hashes)
    for i in range(0, len(hashes), LOOKUP_BATCH):
        EmbeddingCache.objects.filter(
            model=model, content_hash__in=hashes[i : i + LOOKUP_BATCH]
        ).delete()


def cache_keep_displaced(chunk_ids: list[int], model: str) -> None:
    """Move the vectors of ``chunk_ids`` that another provider made into the table."""
    if not chunk_ids:
        return
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO archive_embeddingcache (content_hash, model, vector) "
            "SELECT DISTINCT ON (c.content_hash, c.embedding_model) c.content_hash, "
            "c.embedding_model, c.embedding FROM archive_chunk c "
            "WHERE c.id = ANY(%s) AND c.embedding IS NOT NULL AND c.embedding_model <> %s "
            "AND c.embedding_model <> '' ON CONFLICT DO NOTHING",
            [chunk_ids, model],
        )


def embed_passages_cached(
    provider: EmbeddingProvider, texts: list[str], *, batch_size: int = 32,
    on_progress: Callable[[int], object] | None = None,
) -> tuple[np.ndarray, int]:
    """Return (vectors, number computed): known vectors are reused, new ones kept in the table."""
    hashes = [content_sha256(t) for t in texts]
    found, _ = known_vectors(provider.name, hashes)
    if on_progress and found:
        on_progress(sum(1 for h in hashes if h in found))

    missing: dict[str, str] = {}
    for h, text in zip(hashes, texts, strict=True):
        if h not in found:
            missing.setdefault(h, text)
    pending = list(missing.items())
    for i in range(0, len(pending), batch_size):
        batch = pending[i : i + batch_size]
        vectors = provider.embed_passages([text for _, text in batch])
        EmbeddingCache.objects.bulk_create(
            [EmbeddingCache(content_hash=h, model=provider.name, vector=v)
             for (h, _), v in zip(batch, vectors, strict=True)],
            ignore_conflicts=True,  # a concurrent caller may have stored the same vector
        )
        found.update((h, v) for (h, _), v in zip(batch, vectors, strict=True))
        if on_progress:
            on_progress(sum(hashes.count(h) for h, _ in batch))
    if not texts:
        return np.zeros((0, EMBEDDING_DIMENSIONS), dtype=np.float32), 0
    return np.stack([found[h] for h in hashes]), len(pending)
