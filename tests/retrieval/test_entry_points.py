"""The warm start, the one-channel search and the passages attached to hits."""

import pytest

from archive.models import Chunk, Document
from common.search import DateWindow, SearchRequest
from retrieval import channels
from retrieval.search import search
from retrieval.selectors import with_passages
from retrieval.warm_start import DEFAULT_WEIGHTS, warm_start
from tests.retrieval.conftest import axis_vector, bump_revision

pytestmark = pytest.mark.django_db


@pytest.fixture
def corpus(archive, day):
    docs = {
        "g1": archive.document("gaulois", ["Le ministre Floquet parle des tarifs douaniers."],
                               date=day(2, 1), vectors=[axis_vector(1, 0.1)], title="Le Gaulois"),
        "g2": archive.document("gaulois", ["Floquet et les blés, encore des tarifs."],
                               date=day(2, 10), vectors=[axis_vector(1, 0.3)]),
        "i1": archive.document("intran", ["Floquet répond sur les tarifs des blés."],
                               date=day(2, 3), vectors=[axis_vector(0.2, 1)]),
        "d1": archive.document("debats", ["Sans rapport : la séance est levée."],
                               date=day(3, 1), vectors=[axis_vector(0, 1)]),
    }
    bump_revision()
    return docs


def test_warm_start_scores_are_weighted_reciprocal_ranks_of_its_channels(corpus, day):
    request = SearchRequest("warm_start", "Floquet tarifs axis0",
                            window=DateWindow.around(day(2, 2)), limit=3)
    fused = warm_start(request)
    assert len(fused) == 3 and [h.rank for h in fused] == [1, 2, 3]
    for hit in fused:
        expected = sum(DEFAULT_WEIGHTS.get(name, 1.0) / (60 + rank)
                       for name, rank in hit.channel_ranks.items())
        assert hit.score == pytest.approx(expected)
        best = min(hit.channel_ranks, key=lambda name: (hit.channel_ranks[name], name))
        assert hit.chunk_id == hit.channel_chunks[best]
        assert hit.channel == "warm_start"
    assert any("temporal" in hit.channel_ranks for hit in fused)
    # The target date ranks by distance and filters nothing: a document a month away is found.
    everything = warm_start(request.with_(limit=10))
    assert corpus["d1"].key in {h.document_key for h in everything}


def test_warm_start_without_a_date_leaves_the_temporal_channel_out(corpus):
    fused = warm_start(SearchRequest("warm_start", "Floquet tarifs axis0"),
                       channels=("bm25", "dense", "temporal"))
    assert fused and all(set(h.channel_ranks) <= {"bm25", "dense"} for h in fused)


def test_warm_start_applies_restrictions_inside_every_channel(corpus, day):
    fused = warm_start(SearchRequest(
        "warm_start", "Floquet tarifs axis0", window=DateWindow.around(day(2, 2)),
        sub_corpora=["gaulois"], exclude_document_keys=[corpus["g2"].key]))
    assert [h.document_key for h in fused] == [corpus["g1"].key]


def test_search_runs_one_channel_with_the_window_as_a_filter(corpus, day):
    window = DateWindow(day(2, 1), day(2, 5))
    hits = search(SearchRequest("bm25", "Floquet tarifs", window=window))
    assert {h.document_key for h in hits} == {corpus["g1"].key, corpus["i1"].key}
    assert all(h.channel_ranks == {"bm25": h.rank} for h in hits)
    temporal = search(SearchRequest("temporal", window=DateWindow.around(day(3, 1))))
    assert temporal[0].document_key == corpus["d1"].key and len(temporal) == 4
    assert search(SearchRequest("bm25", "   ")) == []
    with pytest.raises(ValueError, match="date window"):
        search(SearchRequest("temporal"))
    with pytest.raises(ValueError, match="unknown channel"):
        search(SearchRequest("telepathy", "Floquet"))


def test_with_passages_fills_text_title_and_date_and_drops_vanished_chunks(corpus):
    Document.objects.filter(pk=corpus["i1"].pk).update(title="")
    hits = search(SearchRequest("bm25", "Floquet tarifs"))
    gone = corpus["g2"].chunks.get().pk
    Chunk.objects.filter(pk=gone).delete()
    filled = with_passages(hits)
    assert [h.document_key for h in filled] == [h.document_key for h in hits
                                                if h.chunk_id != gone]
    by_key = {h.document_key: h for h in filled}
    g1 = by_key[corpus["g1"].key]
    assert (g1.title, g1.date) == ("Le Gaulois", "1887-02-01")
    assert g1.text == "Le ministre Floquet parle des tarifs douaniers."
    assert by_key[corpus["i1"].key].title == corpus["i1"].key  # untitled: the key stands in
    assert g1.score == next(h.score for h in hits if h.document_key == g1.document_key)


def test_registry_names_every_channel_and_rejects_unknown_ones():
    assert channels.names() == ("bm25", "dense", "temporal", "substring")
    assert all(channels.get(name).name == name for name in channels.names())
    with pytest.raises(ValueError, match="expected one of"):
        channels.get("telepathy")
