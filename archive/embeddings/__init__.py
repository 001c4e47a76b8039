"""Embedding providers behind one interface, chosen by ``TRACE_EMBEDDING_PROVIDER``.

Every provider returns float32 rows of ``archive.models.EMBEDDING_DIMENSIONS`` (512) values,
L2-normalised: shorter vectors (e5-small: 384) are zero-padded, which leaves cosine similarity
unchanged; longer ones are truncated and renormalised, or requested at the configured size with
the endpoint's ``dimensions`` parameter (``TRACE_EMBEDDING_DIMENSIONS``).

Long chunks (up to 1,000 words) and the models' input limits:
- ``use`` (multilingual USE v3, the default): a convolutional encoder that accepts any length
  and averages over all tokens, so a chunk (at most 1,000 words) is embedded whole. Cutting it
  into 225-word windows and mean-pooling them was measured worse on the historiqa dev questions
  (dense recall@10 0.526 vs 0.568), max-pooling much worse (0.393); see
  docs/archive-measurements.md.
- ``e5`` (multilingual-e5-small): 512 tokens at most, about 225 French words of noisy OCR;
  chunks are cut into 225-word windows, which keeps every window inside the limit, and the
  window vectors are mean-pooled; the model's own "query: " / "passage: " prefixes are used.
- ``openai``: endpoint models take thousands of tokens, so chunks go whole.
- ``hash``: a deterministic feature-hashing bag of words for tests; no model at all.

Vectors are cached by (SHA-256 of the chunk text, provider name) in ``EmbeddingCache``; the
name carries every setting that changes vectors, so re-ingest and model switches embed only
what changed.
"""

from __future__ import annotations

from django.conf import settings

from archive.embeddings.base import EmbeddingProvider, fit_dimensions, spread_glued, word_windows
from archive.embeddings.cache import embed_passages_cached
from archive.embeddings.hashing import HashProvider
from archive.embeddings.local import E5Provider, UseProvider

__all__ = [
    "EmbeddingProvider",
    "embed_passages_cached",
    "fit_dimensions",
    "get_provider",
    "spread_glued",
    "word_windows",
]

PROVIDERS = ("use", "e5", "openai", "hash")
_INSTANCES: dict[tuple, EmbeddingProvider] = {}


def get_provider(name: str | None = None) -> EmbeddingProvider:
    """Return the provider ``name`` (default: settings.TRACE_EMBEDDING_PROVIDER), built once."""
    name = name or settings.TRACE_EMBEDDING_PROVIDER
    if name not in PROVIDERS:
        raise ValueError(f"unknown embedding provider {name!r}; expected one of {PROVIDERS}")
    key: tuple = (name,)
    if name == "openai":
        key = (name, settings.TRACE_EMBEDDING_BASE_URL, settings.TRACE_EMBEDDING_MODEL,
               settings.TRACE_EMBEDDING_DIMENSIONS)
    if key not in _INSTANCES:
        _INSTANCES[key] = _build(name)
    return _INSTANCES[key]


def _build(name: str) -> EmbeddingProvider:
    if name == "hash":
        return HashProvider()
    if name == "use":
        return UseProvider()
    if name == "e5":
        return E5Provider()
    # deferred: importing the openai client takes 0.4-0.9 s (python -X importtime after
    # django.setup()), paid only by a process that embeds through an endpoint
    from archive.embeddings.remote import OpenAIProvider

    if not settings.TRACE_EMBEDDING_BASE_URL or not settings.TRACE_EMBEDDING_MODEL:
        raise ValueError(
            "the openai embedding provider needs TRACE_EMBEDDING_BASE_URL and "
            "TRACE_EMBEDDING_MODEL"
        )
    return OpenAIProvider(
        base_url=settings.TRACE_EMBEDDING_BASE_URL,
        model=settings.TRACE_EMBEDDING_MODEL,
        api_key=settings.TRACE_EMBEDDING_API_KEY or "",
        dimensions=settings.TRACE_EMBEDDING_DIMENSIONS or None,
    )
