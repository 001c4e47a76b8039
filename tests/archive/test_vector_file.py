"""Shipped vectors: used when provider, width, checksum and content hash match; else computed."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest
from django.core.management import CommandError, call_command

from archive.embeddings.hashing import HashProvider
from archive.embeddings.vector_file import (
    VectorFileError,
    vector_file_path,
    vector_file_read,
    vector_file_seed,
    vector_file_write,
)
from archive.importers import checked_records, scan_file
from archive.importers.records import DocumentRecord
from archive.models import EMBEDDING_DIMENSIONS, Chunk, Document, EmbeddingCache
from archive.services import ingest_file
from tests.archive.conftest import shared_line

pytestmark = pytest.mark.django_db

TEXTS = {
    "1": "Le ministre a parlé hier. La Chambre a voté la loi. " * 40,
    "2": "Séance du 26 février. M. Clemenceau demande la parole sur l'ordre du jour. " * 30,
    "3": "Nouvelles de la Bourse. La rente a monté de dix centimes. " * 20,
}


def _unit_rows(count: int, seed: int) -> np.ndarray:
    rows = np.random.default_rng(seed).normal(size=(count, EMBEDDING_DIMENSIONS))
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


@pytest.fixture
def corpus(write_jsonl):
    return write_jsonl([shared_line(k, t) for k, t in TEXTS.items()])


@pytest.fixture
def chunk_hashes(corpus):
    """The content hashes of the corpus's chunks (loaded once, then the archive emptied)."""
    ingest_file(path=corpus)
    hashes = list(Chunk.objects.order_by("pk").values_list("content_hash", flat=True))
    Document.objects.all().delete()
    EmbeddingCache.objects.all().delete()
    assert len(set(hashes)) == len(hashes) >= 3
    return hashes


def _stored_vectors() -> dict[str, np.ndarray]:
    return {h: np.asarray(v) for h, v in Chunk.objects.values_list("content_hash", "embedding")}


def test_matching_shipped_vectors_are_taken_and_the_rest_computed(tmp_path, corpus,
                                                                  chunk_hashes):
    shipped = _unit_rows(len(chunk_hashes), seed=1)
    # One chunk is left out, as if its text had changed since the file was written.
    path = tmp_path / "vectors.npz"
    vector_file_write(path, "hash", chunk_hashes[1:], shipped[1:])
    seeded = vector_file_seed(path, "hash")
    assert not seeded.problem and sorted(seeded.added) == sorted(chunk_hashes[1:])

    report = ingest_file(path=corpus)

    assert report.embeddings_computed == 1
    stored = _stored_vectors()
    for h, v in zip(chunk_hashes[1:], shipped[1:], strict=True):
        assert np.dot(stored[h], v) > 0.9999  # the shipped vector, to float16's precision
    computed = HashProvider().embed_passages(
        [Chunk.objects.get(content_hash=chunk_hashes[0]).text])[0]
    assert np.allclose(stored[chunk_hashes[0]], computed, atol=1e-6)
    assert not EmbeddingCache.objects.exists()  # chunks hold them now: no second copy


def _ingest_computes_everything(corpus, chunk_hashes) -> None:
    report = ingest_file(path=corpus)
    assert report.embeddings_computed == len(chunk_hashes)
    provider = HashProvider()
    for chunk in Chunk.objects.all():
        assert np.allclose(chunk.embedding, provider.embed_passages([chunk.text])[0], atol=1e-6)


def test_a_file_of_another_provider_is_ignored(tmp_path, corpus, chunk_hashes):
    path = tmp_path / "vectors.npz"
    vector_file_write(path, "use-multilingual", chunk_hashes,
                      _unit_rows(len(chunk_hashes), seed=2))
    seeded = vector_file_seed(path, "hash")
    assert "made with 'use-multilingual', not 'hash'" in seeded.problem and not seeded.added
    assert "will be computed" in seeded.message
    assert not EmbeddingCache.objects.exists()
    _ingest_computes_everything(corpus, chunk_hashes)


def _tamper(path, **replace) -> None:
    with np.load(path, allow_pickle=False) as data:
        arrays = {name: np.asarray(data[name]) for name in data.files}
    arrays.update(replace)
    with path.open("wb") as out:
        np.savez_compressed(out, **arrays)


@pytest.mark.parametrize("damage", ["truncated", "garbage", "vector changed", "hash changed",
                                    "narrower", "not unit rows", "missing"])
def test_a_damaged_file_is_ignored_and_every_vector_computed(tmp_path, corpus, chunk_hashes,
                                                             damage):
    path = tmp_path / "vectors.npz"
    shipped = _unit_rows(len(chunk_hashes), seed=3)
    vector_file_write(path, "hash", chunk_hashes, shipped)
    with np.load(path, allow_pickle=False) as data:
        header = json.loads(str(data["header"]))
        vectors, digests = np.array(data["vectors"]), np.array(data["hashes"])
    if damage == "truncated":
        path.write_bytes(path.read_bytes()[:-200])
    elif damage == "garbage":
        path.write_bytes(b"\x00not a vector file" * 10)
    elif damage == "vector changed":
        vectors[0, 0] += np.float16(0.25)
        _tamper(path, vectors=vectors)
    elif damage == "hash changed":
        digests[0, 0] ^= 1
        _tamper(path, hashes=digests)
    elif damage == "narrower":
        _tamper(path, vectors=vectors[:, :384])
    elif damage == "not unit rows":
        doubled = (vectors * 2).astype(np.float16)
        header["checksum"] = __import__("hashlib").sha256(
            digests.tobytes() + doubled.tobytes()).hexdigest()
        _tamper(path, vectors=doubled, header=np.array(json.dumps(header)))
    else:
        path.unlink()
    with pytest.raises(VectorFileError):
        vector_file_read(path, "hash")
    seeded = vector_file_seed(path, "hash")
    assert seeded.problem and not seeded.added
    assert not EmbeddingCache.objects.exists()
    _ingest_computes_everything(corpus, chunk_hashes)


def test_export_writes_the_vectors_the_archive_holds_and_they_read_back(tmp_path, corpus):
    ingest_file(path=corpus)
    out = tmp_path / "out" / "embeddings.npz"
    stdout = io.StringIO()
    call_command("export_demo_embeddings", str(corpus), "--provider", "hash", "--out", str(out),
                 stdout=stdout)
    stored = _stored_vectors()
    assert f"{len(stored)} vectors of hash from 3 of 3 documents" in stdout.getvalue()
    shipped = vector_file_read(out, "hash")
    assert sorted(shipped.hashes) == sorted(stored)
    for h, v in zip(shipped.hashes, shipped.vectors, strict=True):
        assert np.dot(v, stored[h]) > 0.9999
    # Float16: a 512-wide vector takes 1 KiB, with its 32-byte hash; compression adds a little.
    assert out.stat().st_size < len(stored) * (2 * EMBEDDING_DIMENSIONS + 32) + 2000


def test_export_refuses_when_the_archive_lacks_the_documents(tmp_path, corpus):
    with pytest.raises(CommandError, match="No chunk of the 3 documents"):
        call_command("export_demo_embeddings", str(corpus), "--provider", "hash",
                     "--out", str(tmp_path / "v.npz"))
    assert not (tmp_path / "v.npz").exists()


def test_the_file_is_named_by_its_provider(tmp_path):
    assert vector_file_path(tmp_path, "use-multilingual").name == "embeddings-use-multilingual.npz"
    assert vector_file_path(tmp_path, "org/model:v1").name == "embeddings-org_model_v1.npz"


def test_a_first_start_loads_the_demo_with_its_shipped_vectors_and_keeps_no_leftover(
        tmp_path, corpus, chunk_hashes, monkeypatch):
    from trace_site.management.commands import serve

    shipped = _unit_rows(len(chunk_hashes) + 1, seed=4)
    unused = "ab" * 32  # a chunk no longer in the demo
    path = tmp_path / "embeddings-hash.npz"
    vector_file_write(path, "hash", [*chunk_hashes, unused], shipped)
    monkeypatch.setattr(serve, "DEMO_CORPUS_FILES", (corpus, tmp_path / "absent.jsonl"))
    monkeypatch.setattr(serve, "demo_vectors_path",
                        lambda model: vector_file_path(tmp_path, model))
    out = io.StringIO()

    serve.Command(stdout=out)._load_demo_corpus()

    said = out.getvalue()
    assert f"{len(chunk_hashes) + 1} shipped vectors of hash found" in said
    assert "No demo corpus at" in said
    stored = _stored_vectors()
    assert sorted(stored) == sorted(chunk_hashes)
    for h, v in zip(chunk_hashes, shipped[:-1], strict=True):
        assert np.dot(stored[h], v) > 0.9999
    assert not EmbeddingCache.objects.exists()


def test_the_shipped_demo_vectors_cover_every_chunk_of_the_demo_as_chunked_today():
    """A change to the demo texts or the chunking fails here: run export_demo_embeddings."""
    from archive.chunk_pool import chunk_spans
    from archive.embeddings.local import UseProvider
    from trace_site.demo_archive import DEMO_CORPUS_FILES, demo_vectors_path

    model = UseProvider().name  # the default provider's; no model is loaded
    texts = [r.text for path in DEMO_CORPUS_FILES
             for r in checked_records(scan_file(path), with_headings=False)
             if isinstance(r, DocumentRecord)]
    hashes = {span[3] for spans in chunk_spans(texts) for span in spans}
    shipped = vector_file_read(demo_vectors_path(model), model)
    assert len(texts) == 1151
    assert set(shipped.hashes) == hashes
