"""Fixtures for retrieval tests: a tiny archive built row by row, with hand-made vectors."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pytest

from archive.models import EMBEDDING_DIMENSIONS, Chunk, CorpusRevision, Document, SubCorpus
from archive.outbox import apply_pending, record_changes
from retrieval.channels import bm25, dense

FAKE_MODEL = "fake-axes"


def axis_vector(*weights: float) -> list[float]:
    """Return a unit vector with the given leading components (rest zero)."""
    vector = np.zeros(EMBEDDING_DIMENSIONS, dtype=np.float32)
    vector[: len(weights)] = weights
    return (vector / np.linalg.norm(vector)).tolist()


class AxisEmbedder:
    """Embed a query by the words it names: 'axis0', 'axis1', ... point along those axes."""

    name = FAKE_MODEL

    def embed_queries(self, texts):
        rows = []
        for text in texts:
            weights = [0.0] * 8
            for word in text.split():
                if word.startswith("axis"):
                    weights[int(word[4:])] += 1.0
            if not any(weights):
                weights[7] = 1.0
            rows.append(axis_vector(*weights))
        return np.asarray(rows, dtype=np.float32)


def bump_revision() -> int:
    row, _ = CorpusRevision.objects.get_or_create(pk=1)
    row.revision += 1
    row.save()
    return row.revision


class ArchiveBuilder:
    """Create sub-corpora, documents and chunks directly."""

    def __init__(self):
        self.sub_corpora: dict[str, SubCorpus] = {}
        self._counter = 0

    def sub_corpus(self, slug: str, genre: str = "press", language: str = "fr") -> SubCorpus:
        if slug not in self.sub_corpora:
            self.sub_corpora[slug] = SubCorpus.objects.create(
                slug=slug, name=slug.title(), genre=genre, language=language
            )
        return self.sub_corpora[slug]

    def document(self, slug, chunks, *, date=None, external_id=None, vectors=None, title=""):
        self._counter += 1
        sub_corpus = self.sub_corpus(slug)
        text = "\n".join(chunks)
        doc = Document.objects.create(
            sub_corpus=sub_corpus, external_id=external_id or f"doc{self._counter}",
            title=title or f"Document {self._counter}", date=date, text=text, content_hash="x",
        )
        offset = 0
        for ordinal, chunk_text in enumerate(chunks):
            vector = vectors[ordinal] if vectors else None
            Chunk.objects.create(
                document=doc, ordinal=ordinal, text=chunk_text, char_start=offset,
                char_end=offset + len(chunk_text), token_count=len(chunk_text.split()),
                embedding=vector, embedding_model=FAKE_MODEL if vector is not None else "",
            )
            offset += len(chunk_text) + 1
        # As an ingest does: mark the document, then bring the indexes up to date.
        record_changes([doc.pk])
        apply_pending()
        return doc


@pytest.fixture(autouse=True)
def _isolated_bm25(settings, tmp_path):
    settings.TRACE_BM25_DIR = tmp_path / "bm25"
    bm25.clear_cache()
    dense.set_embedder(AxisEmbedder())
    yield
    bm25.clear_cache()
    dense.set_embedder(None)


@pytest.fixture
def archive(db):
    return ArchiveBuilder()


@pytest.fixture
def day():
    return lambda month, d: dt.date(1887, month, d)
