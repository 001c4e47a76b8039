"""Ingest streams: memory stays flat as the file grows, and a killed import resumes cleanly."""

from __future__ import annotations

import json
import random
import tracemalloc
from pathlib import Path

import pytest
from django.db import connection

from archive.models import Chunk, CorpusRevision, Document
from archive.services import IngestRefused, ingest_file
from tests.archive.conftest import shared_line

pytestmark = pytest.mark.django_db

WORDS = ("la", "Chambre", "a", "voté", "le", "budget", "de", "la", "guerre", "hier", "soir",
         "après", "un", "long", "débat", "où", "M.", "Floquet", "répondit", "au",
         "général", "Boulanger", "sur", "les", "crédits")
BIG_DOCUMENT_CHARS = 7_000_000


def _big_text(seed: int) -> str:
    rng = random.Random(seed)
    sentences: list[str] = []
    size = 0
    while size < BIG_DOCUMENT_CHARS:
        sentence = " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 30))).capitalize()
        sentences.append(sentence + ".")
        size += len(sentence) + 2
    return " ".join(sentences)


def _write(path: Path, documents: int) -> Path:
    with path.open("w", encoding="utf-8") as out:
        for i in range(documents):
            out.write(shared_line(f"big-{i}", _big_text(i)) + "\n")
    return path


def _peak_traced(path: Path) -> int:
    tracemalloc.start()
    try:
        ingest_file(path=path, embed=False, batch_size=25)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_memory_stays_flat_with_7_mb_documents_whatever_the_file_size(tmp_path):
    small = _peak_traced(_write(tmp_path / "two.jsonl", 2))
    Document.objects.all().delete()
    large = _peak_traced(_write(tmp_path / "six.jsonl", 6))
    assert Document.objects.count() == 6
    # Three times the input, the same peak: one big document at a time is held.
    assert large < small * 1.3, (small, large)
    assert large < 40 * BIG_DOCUMENT_CHARS, large


def test_an_interrupted_import_resumes_without_duplicates(tmp_path, monkeypatch):
    lines = [shared_line(f"doc-{i}", f"Article {i}. La Chambre a voté.") for i in range(60)]
    path = tmp_path / "corpus.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    from archive import services

    real = services._write_prepared
    calls = {"n": 0}

    def dies_on_third_batch(batch, pool, report):
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt  # the process is stopped mid-import
        return real(batch, pool, report)

    monkeypatch.setattr(services, "_write_prepared", dies_on_third_batch)
    with pytest.raises(KeyboardInterrupt):
        ingest_file(path=path, batch_size=10, commit_every_batch=True)
    assert Document.objects.count() == 20  # two batches committed, nothing half-written
    assert all(d.chunks.exists() for d in Document.objects.all())
    monkeypatch.setattr(services, "_write_prepared", real)
    revision = CorpusRevision.current()
    report = ingest_file(path=path, batch_size=10, commit_every_batch=True)
    assert (report.created, report.unchanged) == (40, 20)
    assert Document.objects.count() == 60
    pairs = Chunk.objects.values("document_id", "ordinal").distinct().count()
    assert pairs == Chunk.objects.count()
    assert CorpusRevision.current() == revision + 1  # one revision for the whole import


def test_refuse_checks_the_whole_file_before_the_first_write(tmp_path):
    lines = [shared_line(f"doc-{i}", "Texte.") for i in range(30)]
    lines.append(json.dumps({"collection": "legaulois_1887_v1", "text": "sans identifiant"}))
    path = tmp_path / "late-bad.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(IngestRefused, match="line 31: missing field 'raw_id'"):
        ingest_file(path=path, batch_size=5, commit_every_batch=True)
    assert not Document.objects.exists()


def test_a_large_ingest_leaves_the_planner_statistics_current(tmp_path, monkeypatch):
    # Statistics of an empty table would size a filtered search's plan for no rows at all.
    monkeypatch.setattr("archive.services.ANALYZE_AFTER_CHUNKS", 5)
    path = tmp_path / "ten.jsonl"
    path.write_text("".join(shared_line(f"d{i}", f"Texte du document {i}.") + "\n"
                            for i in range(10)), encoding="utf-8")
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE archive_chunk")  # as the table stood before
        ingest_file(path=path, embed=False)
        cursor.execute("SELECT reltuples FROM pg_class WHERE relname = 'archive_chunk'")
        estimated = cursor.fetchone()[0]
    assert estimated == Chunk.objects.count() == 10


def test_a_large_ingest_chunks_in_a_worker_process_and_writes_the_same_chunks(tmp_path,
                                                                              monkeypatch):
    from archive import services

    source = _big_text(0)
    texts = [source[1_000 * seed : 4_000 + 1_997 * seed] for seed in range(12)]
    path = tmp_path / "corpus.jsonl"
    path.write_text("\n".join(shared_line(f"doc-{i}", t) for i, t in enumerate(texts)) + "\n",
                    encoding="utf-8")

    def stored() -> list[tuple]:
        return list(Chunk.objects.order_by("document__external_id", "ordinal").values_list(
            "document__external_id", "ordinal", "char_start", "char_end", "token_count",
            "content_hash", "text"))

    ingest_file(path=path, embed=False, batch_size=5, commit_every_batch=True)
    in_process = stored()
    Document.objects.all().delete()
    started = []
    real_pool = services.ChunkPool

    def counted_pool(workers):
        started.append(workers)
        return real_pool(workers)

    monkeypatch.setattr(services, "POOL_MIN_RECORDS", 10)
    monkeypatch.setattr(services, "ChunkPool", counted_pool)
    ingest_file(path=path, embed=False, batch_size=5, commit_every_batch=True)
    assert started == [1]  # one worker process chunked the batches
    assert stored() == in_process and len(in_process) > 12
