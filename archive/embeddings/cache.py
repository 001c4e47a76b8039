"""Embed passages through the EmbeddingCache: each (content, provider) pair is embedded once."""

from __future__ import annotations

import hashlib
from collections.abc import Callable

import numpy as np

from archive.embeddings.base import EmbeddingProvider
from archive.models import EMBEDDING_DIMENSIONS, EmbeddingCache


def content_sha256(text: str) -> str:
    """Return the hex SHA-256 of ``text`` (UTF-8)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def embed_passages_cached(
    provider: EmbeddingProvider, texts: list[str], *, batch_size: int = 32,
    on_progress: Callable[[int], object] | None = None,
) -> tuple[np.ndarray, int]:
    """Return (vectors, number computed): cached vectors are reused, new ones are stored."""
    hashes = [content_sha256(t) for t in texts]
    found: dict[str, np.ndarray] = {}
    unique = list(dict.fromkeys(hashes))
    for i in range(0, len(unique), 1000):
        rows = EmbeddingCache.objects.filter(
            model=provider.name, content_hash__in=unique[i : i + 1000]
        ).values_list("content_hash", "vector")
        found.update((h, np.asarray(v, dtype=np.float32)) for h, v in rows)
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
            ignore_conflicts=True,  # a concurrent ingest may have stored the same vector
        )
        found.update((h, v) for (h, _), v in zip(batch, vectors, strict=True))
        if on_progress:
            on_progress(sum(hashes.count(h) for h, _ in batch))
    if not texts:
        return np.zeros((0, EMBEDDING_DIMENSIONS), dtype=np.float32), 0
    return np.stack([found[h] for h in hashes]), len(pending)
