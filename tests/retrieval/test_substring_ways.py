"""The two ways of the substring channel (Tantivy's words, Postgres) find the same chunks."""

import pytest

from common.search import DateWindow, SearchRequest
from retrieval.channels.substring import SubstringChannel

pytestmark = pytest.mark.django_db


_OCR_TEXTS = [
    "La Chambre des députés a voté le budget de la guerre.",
    "la Chainbre des dépntés; le budjet de la gucrre reste.",
    "Vote de laChambre des deputés sur le budget.",
    "M. Floquet, président du conseil, répond à M. Clémenceau.",
    "M. Floqnet répond; M. Clémenceaa demande la parole.",
    "Le général Boulanger à Longchamp; la revue du 14 juillet.",
    "Les députés de la droite protestent contre le général.",
    "(M. Guillaumou) proteste. Budget, guerre, marine.",
]
_PHRASES = ["Chambre des députés", "budget de la guerre", "Floquet", "Clemenceau",
            "général Boulanger", "députés", "la", "guerre marine", "Guillaumou)", "Longchamp"]


@pytest.mark.parametrize("mode", ["auto", "exact", "fuzzy"])
def test_both_ways_find_the_same_chunks_with_the_same_scores(archive, day, mode):
    for number, text in enumerate(_OCR_TEXTS):
        archive.document("gaulois" if number % 2 else "debats", [text, text.upper()[:30]],
                         date=day(1 + number % 3, 1))
    for phrase in _PHRASES:
        for restriction in ({}, {"sub_corpora": ["debats"]},
                            {"window": DateWindow(day(1, 1), day(2, 28))}):
            request = SearchRequest("substring", phrase, mode=mode, limit=50, **restriction)
            found = {way: [(h.document_id, h.chunk_id, round(h.score, 5))
                           for h in SubstringChannel(through_index=way).search(request)]
                     for way in (True, False)}
            assert sorted(found[True]) == sorted(found[False]), (phrase, restriction)


def test_without_a_word_index_yet_postgres_answers(archive):
    import shutil

    from retrieval.bm25 import store

    found = archive.document("debats", ["Le général Boulanger à Longchamp."])
    store.close_all()
    shutil.rmtree(store.index_path())
    hits = SubstringChannel().search(SearchRequest("substring", "Boulanger", limit=5))
    assert [h.document_id for h in hits] == [found.pk]
