"""Embedding providers return 512-wide unit rows; the cache embeds each passage once."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest

from archive.embeddings import (
    embed_passages_cached,
    fit_dimensions,
    get_provider,
    spread_glued,
    word_windows,
)
from archive.embeddings.remote import OpenAIProvider
from archive.models import EMBEDDING_DIMENSIONS, EmbeddingCache


def _unit_rows(matrix: np.ndarray, n: int) -> None:
    assert matrix.dtype == np.float32 and matrix.shape == (n, EMBEDDING_DIMENSIONS)
    assert np.allclose(np.linalg.norm(matrix, axis=1), 1.0, atol=1e-5)


def test_fit_dimensions_pads_short_vectors_and_truncates_long_ones():
    short = fit_dimensions(np.array([[3.0, 4.0]]))
    assert short.shape == (1, 512) and np.allclose(short[0, :2], [0.6, 0.8])
    long = fit_dimensions(np.ones((2, 1024)))
    _unit_rows(long, 2)


def test_word_windows_and_glue_spreading():
    assert word_windows("a b c d e", 2) == ["a b", "c d", "e"]
    assert word_windows("a b", None) == ["a b"]
    assert spread_glued("la parole.M. le président de laChambre") == (
        "la parole. M. le président de la Chambre"
    )


def test_hash_provider_is_deterministic_accent_folded_and_normalised():
    provider = get_provider("hash")
    a = provider.embed_passages(["La Chambre a voté.", "la chambre a vote", "!!!"])
    _unit_rows(a, 3)
    assert np.allclose(a[0], a[1])
    assert np.allclose(provider.embed_queries(["La Chambre a voté."])[0], a[0])


@pytest.mark.django_db
def test_the_cache_embeds_each_passage_once_per_provider():
    provider = get_provider("hash")
    vectors, computed = embed_passages_cached(provider, ["un", "deux", "un"])
    assert computed == 2 and vectors.shape == (3, 512)
    again, computed_again = embed_passages_cached(provider, ["deux", "trois"])
    assert computed_again == 1 and np.allclose(again[0], vectors[1])
    assert EmbeddingCache.objects.filter(model="hash").count() == 3


class _StubEmbeddings(BaseHTTPRequestHandler):
    """An OpenAI-compatible /v1/embeddings endpoint that fails once, then answers."""

    calls: list[dict] = []
    fail_next = True

    def do_POST(self):  # noqa: N802 (http.server naming)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).calls.append(body)
        if type(self).fail_next:
            type(self).fail_next = False
            self.send_response(503)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(b'{"error": {"message": "busy"}}')
            return
        width = body.get("dimensions") or 768
        # Answer out of order: the client must use each item's index.
        data = [
            {"object": "embedding", "index": i,
             "embedding": [float(len(text) + 1)] + [float(i + 1)] * (width - 1)}
            for i, text in enumerate(body["input"])
        ][::-1]
        payload = json.dumps({"object": "list", "data": data, "model": body["model"],
                              "usage": {"prompt_tokens": 1, "total_tokens": 1}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args):
        pass


@pytest.fixture
def stub_server():
    _StubEmbeddings.calls = []
    _StubEmbeddings.fail_next = True
    server = ThreadingHTTPServer(("127.0.0.1", 0), _StubEmbeddings)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def test_openai_provider_batches_retries_orders_and_truncates(stub_server):
    provider = OpenAIProvider(base_url=stub_server, model="stub-embed", batch_size=2,
                              max_retries=2, passage_prefix="passage: ")
    vectors = provider.embed_passages(["a", "bb", "ccc"])
    _unit_rows(vectors, 3)
    calls = _StubEmbeddings.calls
    assert len(calls) == 3  # one failed attempt, then two batches
    assert calls[1]["input"] == ["passage: a", "passage: bb"]
    assert calls[2]["input"] == ["passage: ccc"]
    # Each row is [len(input) + 1, index in batch + 1, ...]: rows match their inputs.
    ratios = vectors[:, 1] / vectors[:, 0]
    assert np.allclose(ratios, [1 / 11, 2 / 12, 1 / 13], rtol=1e-4)
    assert provider.name == "openai:stub-embed"


def test_openai_provider_requests_the_configured_dimensions(stub_server, settings):
    settings.TRACE_EMBEDDING_BASE_URL = stub_server
    settings.TRACE_EMBEDDING_MODEL = "stub-embed"
    settings.TRACE_EMBEDDING_DIMENSIONS = 256
    provider = get_provider("openai")
    _StubEmbeddings.fail_next = False
    _unit_rows(provider.embed_queries(["question"]), 1)
    assert _StubEmbeddings.calls[-1]["dimensions"] == 256
    assert provider.name == "openai:stub-embed@256"


def test_the_multilingual_use_model_embeds_passages_and_queries():
    provider = get_provider("use")
    passages = provider.embed_passages([
        "La Chambre des députés a voté le budget de la guerre.",
        "Le cours du blé a baissé sur le marché de Paris.",
    ])
    _unit_rows(passages, 2)
    query = provider.embed_queries(["budget militaire voté par les députés"])
    _unit_rows(query, 1)
    scores = passages @ query[0]
    assert scores[0] > scores[1]
    assert provider.name == "use-multilingual"
