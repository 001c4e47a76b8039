"""Hybrid search on the search page shows nothing rather than dense-only noise."""

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from common.search import SearchRequest
from retrieval.services import DENSE_ONLY_FLOOR, search_documents
from tests.retrieval.conftest import axis_vector, bump_revision

pytestmark = pytest.mark.django_db


@pytest.fixture
def docs(archive, day):
    # A query with no axis word points along axis 7 (see AxisEmbedder).
    near = archive.document("gaulois", ["Courses à Longchamp, le temps est beau."],
                            date=day(7, 14), vectors=[axis_vector(1, 0, 0, 0, 0, 0, 0, 1.1)])
    faint = archive.document("gaulois", ["La Chambre discute le budget de la guerre."],
                             date=day(7, 15), vectors=[axis_vector(1, 0, 0, 0, 0, 0, 0, 0.4)])
    bump_revision()
    return near, faint


def test_nonsense_returns_nothing_when_only_faint_dense_neighbours_exist(archive, day):
    archive.document("gaulois", ["La Chambre discute le budget de la guerre."],
                     date=day(7, 15), vectors=[axis_vector(1, 0, 0, 0, 0, 0, 0, 0.4)])
    bump_revision()
    dense = search_documents(SearchRequest(query="zzzzqqq", channel="dense", limit=20))
    assert dense and dense[0].score < DENSE_ONLY_FLOOR  # the dense channel alone still answers
    assert search_documents(SearchRequest(query="zzzzqqq", channel="hybrid", limit=20)) == []


def test_a_dense_only_hit_above_the_floor_is_kept_and_keyword_hits_always(docs):
    near, faint = docs
    keys = [g.document.key for g in
            search_documents(SearchRequest(query="zzzzqqq", channel="hybrid", limit=20))]
    assert keys == [near.key]
    keys = [g.document.key for g in
            search_documents(SearchRequest(query="budget", channel="hybrid", limit=20))]
    assert faint.key in keys  # found by BM25: no floor applies


def test_the_search_page_says_no_results_for_nonsense(client, archive, day):
    archive.document("gaulois", ["La Chambre discute le budget de la guerre."],
                     date=day(7, 15), vectors=[axis_vector(1, 0, 0, 0, 0, 0, 0, 0.4)])
    bump_revision()
    user = get_user_model().objects.create_user("historian", password="pw-for-tests")
    client.force_login(user)
    html = client.get(reverse("search"), {"q": "zzzzqqq", "channel": "hybrid"}).content.decode()
    assert "No documents found." in html and "search-hit" not in html
    html = client.get(reverse("search"), {"q": "zzzzqqq", "channel": "dense"}).content.decode()
    assert "Nothing is close in meaning" in html
