"""The HNSW (cosine) index serves vector queries; substring queries need no index on chunk text."""

from __future__ import annotations

import pytest
from django.db import connection
from pgvector.django import CosineDistance

from archive.embeddings import get_provider
from archive.models import Chunk
from archive.services import ingest_file
from common.search import SearchRequest
from common.sql import like_pattern
from retrieval.channels.substring import SubstringChannel
from tests.archive.conftest import shared_line
from tests.conftest import indexes_in_step_with_the_database

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


def test_substring_search_needs_no_trigram_index_on_chunk_text(small_archive):
    with connection.cursor() as cursor:
        cursor.execute("SELECT indexname FROM pg_indexes WHERE tablename = 'archive_chunk'")
        indexes = {row[0] for row in cursor.fetchall()}
    assert "chunk_text_trgm" not in indexes and "chunk_content_hash" in indexes
    # What the import's commit does outside this test's transaction; earlier tests' rolled-back
    # documents leave the search index too.
    indexes_in_step_with_the_database()
    hits = SubstringChannel().search(SearchRequest(query="Boulangr", channel="substring", limit=20))
    assert len(hits) == 8
    ilike = Chunk.objects.filter(text__ilike=like_pattern("boulanger")).order_by()
    assert ilike.count() == 8
    assert not Chunk.objects.filter(text__ilike=like_pattern("100%_sur")).exists()
