"""The HNSW (cosine) and trigram GIN indexes serve the archive's vector and substring queries."""

from __future__ import annotations

import pytest
from django.db import connection
from pgvector.django import CosineDistance

from archive.embeddings import get_provider
from archive.models import Chunk
from archive.services import ingest_file
from common.sql import like_pattern
from tests.archive.conftest import shared_line

pytestmark = pytest.mark.django_db


@pytest.fixture
def small_archive(write_jsonl):
    topics = ["budget de la guerre", "le général Boulanger", "la Chambre des députés",
              "le cours du blé", "l'exposition universelle"]
    lines = [shared_line(str(i), f"Article {i} sur {topics[i % 5]}. Fin de l'article {i}.")
             for i in range(40)]
    ingest_file(path=write_jsonl(lines))
    # On a tiny table the planner rightly prefers a scan; forbid it to see the index is usable.
    # Earlier tests' rolled-back rows stay in the HNSW graph until a vacuum (none runs inside the
    # test database's life): keep scanning past all of them, as the dense channel does past filters.
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
        cursor.execute("SET LOCAL hnsw.ef_search = 1000")
        cursor.execute("SET LOCAL hnsw.max_scan_tuples = 10000000")


def test_cosine_order_by_limit_uses_the_hnsw_index(small_archive):
    query = get_provider().embed_queries(["Boulanger"])[0]
    queryset = Chunk.objects.order_by(CosineDistance("embedding", query))[:5]
    plan = queryset.explain()
    assert "chunk_embedding_hnsw" in plan, plan
    assert len(list(queryset)) == 5


def test_trigram_similarity_and_ilike_use_the_gin_index(small_archive):
    # order_by() drops the model's default ordering, which an ordinal index scan would serve.
    similar = Chunk.objects.filter(text__trigram_word_similar="Boulangr").order_by()
    assert "chunk_text_trgm" in similar.explain()
    assert similar.count() == 8
    ilike = Chunk.objects.filter(text__ilike=like_pattern("boulanger")).order_by()
    assert "chunk_text_trgm" in ilike.explain()
    assert ilike.count() == 8
    assert not Chunk.objects.filter(text__ilike=like_pattern("100%_sur")).exists()
