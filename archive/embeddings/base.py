"""The embedding provider interface and the vector shape every provider returns."""

from __future__ import annotations

import re
from abc import ABC, abstractmethod

import numpy as np

from archive.models import EMBEDDING_DIMENSIONS

_GLUED_PUNCT = re.compile(r"([.!?;:,])(?=[A-Za-zÀ-ÿ])")
_GLUED_CASE = re.compile(r"([a-zà-ÿ])(?=[A-ZÀ-ÝŒ])")


def fit_dimensions(vectors: np.ndarray, dimensions: int = EMBEDDING_DIMENSIONS) -> np.ndarray:
    """Return float32 rows of exactly ``dimensions`` values, L2-normalised."""
    matrix = np.asarray(vectors, dtype=np.float32)
    if matrix.ndim == 1:
        matrix = matrix[None, :]
    width = matrix.shape[1]
    if width < dimensions:
        # Zero-padding keeps every cosine similarity unchanged.
        matrix = np.pad(matrix, ((0, 0), (0, dimensions - width)))
    elif width > dimensions:
        matrix = matrix[:, :dimensions]
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return np.ascontiguousarray(matrix / np.where(norms == 0, 1.0, norms), dtype=np.float32)


def word_windows(text: str, size: int | None) -> list[str]:
    """Cut ``text`` into consecutive windows of at most ``size`` whitespace tokens."""
    words = text.split()
    if not size or len(words) <= size:
        return [" ".join(words) or text]
    return [" ".join(words[i : i + size]) for i in range(0, len(words), size)]


def spread_glued(text: str) -> str:
    """Put a space where OCR glued words: after punctuation and at a lower-upper seam."""
    return _GLUED_CASE.sub(r"\1 ", _GLUED_PUNCT.sub(r"\1 ", text))


class EmbeddingProvider(ABC):
    """Embed passages and queries as float32 (n, EMBEDDING_DIMENSIONS) L2-normalised rows."""

    name: str

    @abstractmethod
    def embed_passages(self, texts: list[str]) -> np.ndarray:
        """Embed document passages."""

    @abstractmethod
    def embed_queries(self, texts: list[str]) -> np.ndarray:
        """Embed search queries."""


class WindowedProvider(EmbeddingProvider):
    """A provider that embeds long passages as word windows and pools them.

    ``window_words`` None embeds each passage whole; otherwise each passage is cut into windows
    of that many words, all windows are embedded in one batch and their unit vectors are pooled
    per passage (``pooling`` "mean": the normalised mean; "max": element-wise max).
    """

    def __init__(
        self, *, window_words: int | None, pooling: str = "mean", deglue: bool = False
    ) -> None:
        if pooling not in {"mean", "max"}:
            raise ValueError(f"unknown pooling {pooling!r}")
        self.window_words = window_words
        self.pooling = pooling
        self.deglue = deglue

    @abstractmethod
    def _encode(self, texts: list[str], *, is_query: bool) -> np.ndarray:
        """Return raw vectors, one row per text."""

    def _prepare(self, text: str) -> str:
        return spread_glued(text) if self.deglue else text

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, EMBEDDING_DIMENSIONS), dtype=np.float32)
        windows: list[str] = []
        owners: list[int] = []
        for i, text in enumerate(texts):
            pieces = word_windows(self._prepare(text), self.window_words)
            windows.extend(pieces)
            owners.extend([i] * len(pieces))
        vectors = fit_dimensions(self._encode(windows, is_query=False))
        owner = np.asarray(owners)
        pooled = np.zeros((len(texts), vectors.shape[1]), dtype=np.float32)
        for i in range(len(texts)):
            rows = vectors[owner == i]
            pooled[i] = rows.max(axis=0) if self.pooling == "max" else rows.mean(axis=0)
        return fit_dimensions(pooled)

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, EMBEDDING_DIMENSIONS), dtype=np.float32)
        return fit_dimensions(self._encode([self._prepare(t) for t in texts], is_query=True))

    def _variant_suffix(self, default_window: int | None) -> str:
        # The name keys the embedding cache, so every non-default setting must appear in it.
        parts = []
        if self.window_words != default_window:
            parts.append(f"w{self.window_words or 'whole'}")
        if self.window_words and self.pooling != "mean":
            parts.append(self.pooling)
        if self.deglue:
            parts.append("deglue")
        return ("/" + "-".join(parts)) if parts else ""
