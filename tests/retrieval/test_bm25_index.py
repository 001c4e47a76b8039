"""The BM25 index follows what Postgres commits; repaired at start, never built by a query."""

from __future__ import annotations

import shutil
import threading

import pytest
from django.db import connection, transaction

from archive import outbox
from archive.models import Document
from archive.services import ingest_file
from common.search import SearchRequest
from retrieval.bm25 import indexer, store, tantivy_engine
from retrieval.channels import bm25
from retrieval.maintenance import indexes_start_up
from tests.archive.conftest import shared_line

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(params=store.ENGINES)
def engine(request, settings):
    settings.TRACE_BM25_ENGINE = request.param
    bm25.clear_cache()
    indexes_start_up()  # as `serve` and every worker do: an empty archive, an empty index
    yield request.param
    bm25.clear_cache()


@pytest.fixture
def ingest(tmp_path, settings):
    """Ingest lines (no embedding) as `manage.py ingest` would; return the report."""
    settings.TRACE_EMBEDDING_PROVIDER = "hash"
    counter = iter(range(1000))

    def run(*lines: str):
        path = tmp_path / f"part{next(counter)}.jsonl"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        return ingest_file(path=path, embed=False)
    return run


def found(query: str) -> set[str]:
    hits = bm25.Bm25Channel().search(SearchRequest(channel="bm25", query=query, limit=50))
    return {hit.document_key for hit in hits}


def article(raw_id: str, text: str) -> str:
    return shared_line(raw_id, text)


def test_what_an_ingest_commits_is_searchable_once_it_ends(engine, ingest):
    report = ingest(article("1", "Le général Boulanger passe en revue les troupes."),
                    article("2", "Courses à Longchamp."))
    assert report.indexed["bm25"] == 2
    assert found("Boulanger") == {"legaulois_1887_v1:1"}
    assert outbox.backlog()["bm25"] == 0


def test_a_rolled_back_write_is_never_searchable(engine, ingest):
    ingest(article("1", "Courses à Longchamp."))
    with pytest.raises(RuntimeError), transaction.atomic():
        ingest(article("2", "Le scandale des décorations éclate."))
        raise RuntimeError("the import fails after its writes")
    outbox.apply_pending()
    assert found("décorations") == set()
    assert Document.objects.count() == 1


def test_a_replaced_document_is_found_by_its_new_text_and_a_deleted_one_is_gone(engine, ingest):
    ingest(article("1", "Le ministre parle des céréales."), article("2", "Panama."))
    ingest(article("1", "Le ministre parle des chemins de fer."), article("2", "Panama."))
    assert found("céréales") == set()
    assert found("chemins") == {"legaulois_1887_v1:1"}
    Document.objects.get(external_id="2").delete()
    assert found("Panama") == {"legaulois_1887_v1:2"}  # not applied yet: last commit answers
    outbox.apply_pending()
    assert found("Panama") == set()


def test_a_killed_indexer_is_repaired_by_replaying_only_its_marks(engine, ingest, monkeypatch):
    ingest(*(article(str(i), f"Séance numéro {i} de la Chambre.") for i in range(6)))
    # The indexer dies after the documents were written, before it applied them.
    monkeypatch.setattr(indexer, "apply_documents", _crash)
    ingest(article("new1", "Le tunnel sous la Manche."), article("new2", "La Manche et Calais."))
    monkeypatch.undo()
    assert outbox.backlog()["bm25"] == 2
    assert found("Manche") == set()
    written: list[int] = []
    real = indexer.apply_documents
    monkeypatch.setattr(indexer, "apply_documents",
                        lambda index, ids: written.extend(ids) or real(index, ids))
    assert outbox.apply_pending()["bm25"] == 2
    assert len(written) == 2  # only the two marked documents, not the six others
    assert found("Manche") == {"legaulois_1887_v1:new1", "legaulois_1887_v1:new2"}
    assert outbox.backlog()["bm25"] == 0


def _crash(index, ids):
    raise OSError("the indexer was killed")


def test_a_deleted_index_is_repaired_at_start_and_reported_by_healthz(engine, ingest, client):
    ingest(article("1", "Boulanger à Longchamp."), article("2", "Ferry au Tonkin."))
    bm25.clear_cache()
    shutil.rmtree(store.index_path())
    assert found("Boulanger") == set()  # a query builds nothing
    assert not store.exists(store.index_path(), engine)
    assert client.get("/healthz").json()["checks"]["bm25"].startswith("missing:")
    done = indexes_start_up()
    assert done["bm25"].startswith("created (2 documents written")
    assert found("Boulanger") == {"legaulois_1887_v1:1"}
    message = client.get("/healthz").json()["checks"]["bm25"]
    assert message.startswith(f"ok: {engine}, 2 chunks indexed; 0 document(s) waiting"), message


def test_a_corrupt_index_is_rebuilt_at_start(engine, ingest):
    ingest(article("1", "Boulanger à Longchamp."))
    bm25.clear_cache()
    for path in store.index_path().iterdir():
        if path.is_file():
            path.write_bytes(b"\x00garbage")
    report = indexer.bring_up_to_date()
    assert report.action in {"rebuilt", "created"} and report.documents_written == 1
    bm25.clear_cache()
    assert found("Boulanger") == {"legaulois_1887_v1:1"}


def test_only_the_documents_missing_from_the_index_are_reindexed(engine, ingest):
    ingest(*(article(str(i), f"Le député numéro {i} interpelle le ministre.") for i in range(10)))
    ids = sorted(Document.objects.values_list("pk", flat=True))
    index = store.opened()
    from retrieval.bm25.base import IndexChanges
    index.apply(IndexChanges(remove_document_ids=tuple(ids[:5])))
    assert len(index.documents_indexed()) == 5
    report = indexer.bring_up_to_date()
    assert (report.action, report.documents_written) == ("repaired", 5)
    assert len(store.opened().documents_indexed()) == 10
    assert indexer.bring_up_to_date().action == "none"


def test_documents_are_counted_in_id_ranges_under_tantivys_bucket_limit(ingest, monkeypatch,
                                                                         settings):
    settings.TRACE_BM25_ENGINE = "tantivy"
    bm25.clear_cache()
    ingest(*(article(str(i), f"Le député numéro {i} interpelle le ministre.") for i in range(7)))
    indexer.bring_up_to_date()
    expected = indexer.database_documents()
    monkeypatch.setattr(tantivy_engine, "COUNTED_PER_AGGREGATION", 2)  # four ranges
    assert store.opened().documents_indexed() == expected
    assert indexer.bring_up_to_date().action == "none"


def test_a_query_during_an_ingest_answers_from_the_last_consistent_state(engine, ingest):
    ingest(article("1", "Le général Boulanger."))
    writing, release = threading.Event(), threading.Event()
    errors: list[BaseException] = []

    def slow_ingest() -> None:
        try:
            with transaction.atomic():
                ingest(article("2", "Boulanger encore, à Clermont."))
                writing.set()
                release.wait(30)
        except BaseException as exc:  # surfaced below
            errors.append(exc)
        finally:
            connection.close()

    thread = threading.Thread(target=slow_ingest)
    thread.start()
    try:
        assert writing.wait(30)
        assert found("Boulanger") == {"legaulois_1887_v1:1"}  # uncommitted: not seen
    finally:
        release.set()
        thread.join(30)
    assert not errors
    assert found("Boulanger") == {"legaulois_1887_v1:1", "legaulois_1887_v1:2"}
