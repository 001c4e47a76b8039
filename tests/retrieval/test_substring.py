"""The substring channel matches through a vocabulary kept current with every archive write.

Every search test runs both ways of finding chunks: through the Tantivy index's words and
through Postgres (the way of an index without words, whoosh's).
"""

import threading

import pytest
from django.db import connection

from archive.outbox import apply_pending, record_changes
from common.search import DateWindow, SearchRequest
from retrieval import vocabulary
from retrieval.channels import substring_sql
from retrieval.channels.substring import SubstringChannel
from retrieval.models import ChunkWords, VocabularyStamp, VocabularyWord
from tests.retrieval.conftest import ArchiveBuilder, bump_revision

pytestmark = pytest.mark.django_db

_WAY = {"through_index": True}


@pytest.fixture(autouse=True, params=["index", "sql"])
def way(request, monkeypatch):
    """Run the test through one way; the SQL way must not be taken when the index is asked."""
    _WAY["through_index"] = request.param == "index"
    if request.param == "index":
        def refuse(*args, **kwargs):
            raise AssertionError("the Postgres way was taken with a word index present")
        monkeypatch.setattr(substring_sql, "chunk_hits", refuse)
    return request.param


def doc_ids(hits):
    return [h.document_id for h in hits]


def chunks_holding(word):
    return set(ChunkWords.objects.filter(words__contains=[word]).values_list("chunk_id", flat=True))


def find(phrase, **fields):
    """Search the substring channel for a phrase (five documents unless told)."""
    channel = SubstringChannel(through_index=_WAY["through_index"])
    return channel.search(SearchRequest("substring", phrase, **{"limit": 5, **fields}))


def test_vocabulary_is_rebuilt_when_the_corpus_revision_changes(archive):
    first = archive.document("p", ["Le général Boulanger à Longchamp."])
    bump_revision()
    assert vocabulary.ensure_fresh() is True
    assert vocabulary.ensure_fresh() is False  # same corpus: nothing to do
    assert chunks_holding("general") == {first.chunks.get().pk}
    assert doc_ids(find("Boulanger")) == [first.pk]

    first.chunks.update(text="Le général Ferry à Longchamp.")
    revision = bump_revision()
    record_changes([first.pk])  # as every archive write does
    apply_pending()
    assert doc_ids(find("Boulanger")) == []
    assert doc_ids(find("Ferry")) == [first.pk]
    assert VocabularyStamp.objects.get(pk=1).revision == revision
    assert not VocabularyWord.objects.filter(word="boulanger").exists()


def test_chunks_added_without_a_revision_bump_are_still_found(archive):
    archive.document("p", ["Le budget de la guerre."])
    bump_revision()
    assert find("Freycinet") == []
    late = archive.document("p", ["M. de Freycinet répond."])
    assert doc_ids(find("Freycinet", mode="fuzzy")) == [late.pk]


def test_vocabulary_folds_case_and_accents_and_keeps_glued_words(archive):
    archive.document("p", ["laChambre des DÉPUTÉS; l'Œuvre"])
    bump_revision()
    vocabulary.ensure_fresh()
    assert set(VocabularyWord.objects.values_list("word", flat=True)) == {
        "lachambre", "des", "deputes", "l", "oeuvre"}


@pytest.mark.parametrize(("query", "text"), [
    ("Floquet", "Le président du conseil, M. Floqnet, répond."),
    ("Clemenceau", "M. Clémenceaa demande la parole."),
    ("Chambre des députés", "la Chainbre des dépntés a voté"),
    ("Chambre", "séance de laChambre hier"),
])
def test_fuzzy_finds_ocr_variants(archive, query, text):
    damaged = archive.document("debats", [text])
    archive.document("debats", ["Rien à voir avec le sujet du jour."])
    bump_revision()
    assert doc_ids(find(query, mode="fuzzy")) == [damaged.pk]


def test_exact_phrase_spans_glued_words_and_punctuation_and_ranks_above_fuzzy(archive):
    glued = archive.document("debats", ["Vote de laChambre des deputés hier."])
    variant = archive.document("debats", ["Vote de la Chanbre des députés hier."])
    apart = archive.document("debats", ["La Chambre vote; les députés partent."])
    paren = archive.document("debats", ["(M. Guillaumou) proteste."])
    bump_revision()
    hits = find("chambre des députés")
    assert doc_ids(hits)[0] == glued.pk and hits[0].score >= 1.0
    assert variant.pk in doc_ids(hits) and all(h.score < 1.0 for h in hits[1:])
    exact = find("Chambre des Députés", mode="exact")
    assert doc_ids(exact) == [glued.pk]
    assert apart.pk not in doc_ids(exact)
    assert doc_ids(find("Guillaumou)", mode="exact")) == [paren.pk]
    assert find("100%_sur", mode="exact") == []


def test_fuzzy_hits_honour_every_constraint_inside_the_query(archive, day):
    in_window = archive.document("gaulois", ["M. Floqnet parle.", "Floquet encore."],
                                 date=day(2, 1))
    later = archive.document("gaulois", ["M. Floquct à la tribune."], date=day(5, 1))
    other = archive.document("intran", ["M. Floquet répond."], date=day(2, 2))
    bump_revision()

    def run(**changes):
        return find("Floquet", **{"limit": 10, "mode": "fuzzy", **changes})

    assert set(doc_ids(run())) == {in_window.pk, later.pk, other.pk}
    assert set(doc_ids(run(sub_corpora=["gaulois"]))) == {in_window.pk, later.pk}
    assert set(doc_ids(run(window=DateWindow(day(1, 15), day(2, 15))))) == {
        in_window.pk, other.pk}
    assert set(doc_ids(run(document_ids=[later.pk]))) == {later.pk}
    assert set(doc_ids(run(exclude_document_keys=[other.key]))) == {in_window.pk, later.pk}
    assert set(doc_ids(run(exclude_document_keys=[later.key]))) == {in_window.pk, other.pk}
    first, second = in_window.chunks.order_by("ordinal")
    best = [h for h in run() if h.document_id == in_window.pk][0]
    assert best.chunk_id == second.pk  # exact spelling beats the OCR variant within a document
    kept = [h for h in run(exclude_chunk_ids=[second.pk]) if h.document_id == in_window.pk]
    assert [h.chunk_id for h in kept] == [first.pk]
    assert len(run(limit=2)) == 2


@pytest.mark.django_db(transaction=True)
def test_concurrent_refreshes_build_the_vocabulary_once():
    ArchiveBuilder().document("p", ["Panama et les chéquards."])
    bump_revision()
    results = []

    def refresh():
        try:
            results.append(vocabulary.refresh())
        finally:
            connection.close()

    threads = [threading.Thread(target=refresh) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(results) == [False, False, True]
    assert VocabularyWord.objects.filter(word="chequards").exists()
    assert vocabulary.ensure_fresh() is False


@pytest.mark.django_db(transaction=True)
def test_an_ingest_adds_its_words_and_a_deletion_removes_them_without_a_rebuild(tmp_path):
    from archive.models import Document
    from archive.services import ingest_file
    from tests.archive.conftest import shared_line

    def ingest(*lines: str) -> None:
        path = tmp_path / f"{len(list(tmp_path.iterdir()))}.jsonl"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        ingest_file(path=path, embed=False)

    ingest(shared_line("1", "Le général Boulanger à Longchamp."))
    assert vocabulary.built_stamp() is not None
    built_at = VocabularyStamp.objects.get(pk=1).built_at
    stamp_rows = VocabularyWord.objects.count()
    ingest(shared_line("2", "Le scandale des décorations et M. Wilson."))
    assert doc_ids(find("Wilson")) == [Document.objects.get(external_id="2").pk]
    assert VocabularyWord.objects.count() > stamp_rows
    assert VocabularyStamp.objects.get(pk=1).built_at >= built_at
    # No rebuild: the first document's word rows were never rewritten.
    assert vocabulary.ensure_fresh() is False
    Document.objects.get(external_id="2").delete()
    apply_pending()
    assert find("Wilson") == [] and not VocabularyWord.objects.filter(word="wilson").exists()
    # Shared words keep the other document's chunk only.
    first = Document.objects.get(external_id="1")
    assert chunks_holding("general") == set(first.chunks.values_list("pk", flat=True))


@pytest.mark.django_db(transaction=True)
def test_start_up_reapplies_only_documents_the_vocabulary_holds_wrongly():
    builder = ArchiveBuilder()
    kept = builder.document("p", ["Le budget de la guerre."])
    lost = builder.document("p", ["M. de Freycinet répond."])
    with connection.cursor() as cursor:  # as if a crash lost one document's application
        cursor.execute("DELETE FROM retrieval_chunk_words WHERE document_id = %s", [lost.pk])
    assert vocabulary.repair() == "repaired (1 documents)"
    assert doc_ids(find("Freycinet")) == [lost.pk] and doc_ids(find("budget")) == [kept.pk]
    assert vocabulary.repair() == "up to date"


def test_a_whole_rebuild_leaves_the_word_indexes_as_the_migrations_made_them(archive):
    def word_indexes():
        with connection.cursor() as cursor:
            cursor.execute("SELECT indexname, indexdef FROM pg_indexes WHERE tablename IN "
                           "('retrieval_vocabulary', 'retrieval_chunk_words') ORDER BY 1")
            return cursor.fetchall()

    before = word_indexes()
    archive.document("p", ["Le général Boulanger à Longchamp."])
    assert vocabulary.refresh(force=True) is True
    assert word_indexes() == before
    assert {name for name, _ in before} >= {"chunk_words_gin", "vocabulary_word_trgm"}
    assert doc_ids(find("Boulanger")) != []

