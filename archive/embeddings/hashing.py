"""A deterministic feature-hashing bag of words: fast, model-free vectors for tests."""

from __future__ import annotations

import hashlib
import re

import numpy as np

from archive.embeddings.base import EmbeddingProvider, fit_dimensions
from archive.models import EMBEDDING_DIMENSIONS
from common.text import lower_without_accents

_WORD = re.compile(r"\w+")
# Words repeat: their (bucket, sign) is computed once. Bounded, so memory stays flat.
_FEATURES: dict[str, tuple[int, float]] = {}
_FEATURES_MAX = 500_000


def _feature(word: str) -> tuple[int, float]:
    feature = _FEATURES.get(word)
    if feature is None:
        digest = hashlib.blake2b(word.encode(), digest_size=8).digest()
        bucket = int.from_bytes(digest[:4], "little") % EMBEDDING_DIMENSIONS
        feature = (bucket, 1.0 if digest[4] & 1 else -1.0)
        if len(_FEATURES) < _FEATURES_MAX:
            _FEATURES[word] = feature
    return feature


class HashProvider(EmbeddingProvider):
    """Signed feature hashing of accent-folded words; queries and passages share one space."""

    name = "hash"

    def _vector(self, text: str) -> np.ndarray:
        vector = np.zeros(EMBEDDING_DIMENSIONS, dtype=np.float32)
        # Text without any word still gets a non-zero vector (a zero row has no cosine).
        words = _WORD.findall(lower_without_accents(text)) or [text.strip() or "<empty>"]
        features = _FEATURES
        pairs = [features.get(word) or _feature(word) for word in words]
        # Sums of ±1 are exact, so adding them in another order gives the same vector.
        vector = np.bincount([b for b, _ in pairs], weights=[w for _, w in pairs],
                             minlength=EMBEDDING_DIMENSIONS).astype(np.float32)
        if not vector.any():
            vector[0] = 1.0
        return vector

    def _embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, EMBEDDING_DIMENSIONS), dtype=np.float32)
        return fit_dimensions(np.stack([self._vector(t) for t in texts]))

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        return self._embed(texts)

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        return self._embed(texts)
