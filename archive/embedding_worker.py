"""The body of an embedding worker process; importable before Django is set up.

A spawned process unpickles its task functions by importing their module first, so this module
imports only the bare ``django`` package at load time: no settings, no models.
"""

from __future__ import annotations

import pickle

import django
import numpy as np

_provider = None


def worker_start(pickled_provider: bytes) -> None:
    """Set Django up, then load the provider this worker embeds with."""
    django.setup()
    global _provider
    _provider = pickle.loads(pickled_provider)


def worker_embed(texts: list[str]) -> np.ndarray:
    """Embed ``texts`` as passages with this worker's provider."""
    if _provider is None:
        raise RuntimeError("embedding worker started without a provider")
    return np.asarray(_provider.embed_passages(texts), dtype=np.float32)
