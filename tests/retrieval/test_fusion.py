"""RRF, max-pooling and the best-chunk loop on hand-computed examples (no database)."""

import datetime as dt

import pytest

from common.search import DateWindow, Hit, SearchRequest
from measurement.evaluation.fusions import interleave
from retrieval.channels.base import best_chunk_per_document
from retrieval.fusion import max_pool, rrf


def hit(key, score=1.0, rank=0, channel="bm25", chunk=None):
    doc_id = ord(key[-1])
    return Hit(chunk_id=chunk or doc_id * 10, document_id=doc_id, document_key=key,
               sub_corpus=key.split(":")[0], score=score, rank=rank, channel=channel)


def test_rrf_scores_are_sums_of_reciprocal_ranks_with_k_60():
    bm25 = [hit("p:A"), hit("p:B"), hit("p:C")]
    dense = [hit("p:B", channel="dense"), hit("p:D", channel="dense")]
    fused = rrf({"bm25": bm25, "dense": dense})
    assert [f.document_key for f in fused] == ["p:B", "p:A", "p:D", "p:C"]
    scores = {f.document_key: f.score for f in fused}
    assert scores["p:B"] == pytest.approx(1 / 62 + 1 / 61)  # 0.032522
    assert scores["p:A"] == pytest.approx(1 / 61)  # 0.016393
    assert scores["p:D"] == pytest.approx(1 / 62)  # 0.016129
    assert scores["p:C"] == pytest.approx(1 / 63)  # 0.015873
    assert fused[0].channel_ranks == {"bm25": 2, "dense": 1}
    assert fused[0].rank == 1 and fused[3].rank == 4


def test_rrf_with_custom_k_and_list_input_names_rankings_by_channel():
    fused = rrf([[hit("p:A"), hit("p:B")], [hit("p:B", channel="dense")]], k=1)
    assert fused[0].document_key == "p:B"
    assert fused[0].score == pytest.approx(1 / 3 + 1 / 2)
    assert fused[1].score == pytest.approx(1 / 2)
    assert fused[0].channel_ranks == {"bm25": 2, "dense": 1}


def test_rrf_keeps_each_channels_chunk_and_picks_best_chunk_from_top_channel():
    fused = rrf({"bm25": [hit("p:A", chunk=1)], "dense": [hit("p:B"), hit("p:A", chunk=2)]})
    a = next(f for f in fused if f.document_key == "p:A")
    assert a.channel_chunks == {"bm25": 1, "dense": 2}
    assert a.chunk_id == 1
    b = next(f for f in fused if f.document_key == "p:B")
    assert b.chunk_id == b.channel_chunks["dense"]  # the only channel that found it


def test_rrf_ties_are_broken_by_best_single_rank_then_key():
    fused = rrf({"x": [hit("p:A"), hit("p:B")], "y": [hit("p:B"), hit("p:A")]})
    assert fused[0].score == pytest.approx(fused[1].score)
    assert [f.document_key for f in fused] == ["p:A", "p:B"]


def test_max_pool_keeps_best_chunk_per_document_and_reranks():
    pooled = max_pool([
        hit("p:A", score=0.2, chunk=1), hit("p:B", score=0.9, chunk=2),
        hit("p:A", score=0.7, chunk=3), hit("p:C", score=0.1, chunk=4),
    ])
    assert [(h.document_key, h.chunk_id, h.rank) for h in pooled] == [
        ("p:B", 2, 1), ("p:A", 3, 2), ("p:C", 4, 3)]
    assert pooled[1].channel_ranks == {"bm25": 2} and pooled[1].channel_chunks == {"bm25": 3}


def test_max_pool_cap_counts_documents_not_chunks():
    hits = [hit("p:A", score=1.0, chunk=1), hit("p:A", score=0.9, chunk=2), hit("p:B", score=0.5)]
    assert [h.document_key for h in max_pool(hits, cap=2)] == ["p:A", "p:B"]


def test_search_request_normalises_iterables_and_rejects_bad_values():
    request = SearchRequest("bm25", sub_corpora=["a"], exclude_chunk_ids=[3], limit=5)
    assert request.sub_corpora == ("a",) and request.exclude_chunk_ids == (3,)
    assert request.document_ids is None and hash(request)
    with pytest.raises(ValueError):
        SearchRequest("bm25", limit=0)
    with pytest.raises(ValueError):
        DateWindow(dt.date(1887, 2, 2), dt.date(1887, 2, 1))


def test_weighted_rrf_scales_each_channels_contribution():
    fused = rrf({"bm25": [hit("p:A"), hit("p:B")], "dense": [hit("p:B"), hit("p:C")]},
                weights={"dense": 0.5})
    scores = {f.document_key: f.score for f in fused}
    assert scores["p:A"] == pytest.approx(1 / 61)  # 0.016393
    assert scores["p:B"] == pytest.approx(1 / 62 + 0.5 / 61)  # 0.024326
    assert scores["p:C"] == pytest.approx(0.5 / 62)  # 0.008065
    assert [f.document_key for f in fused] == ["p:B", "p:A", "p:C"]


def test_best_chunk_loop_grows_the_fetch_until_enough_documents():
    # Document A fills the first 120 chunk rows; B and C only come after them.
    rows = [hit("p:A", score=1.0 - i / 1000, chunk=i + 1) for i in range(120)]
    rows += [hit("p:B", score=0.5, chunk=500), hit("p:C", score=0.4, chunk=600)]
    fetched = []

    def fetch(limit):
        fetched.append(limit)
        return rows[:limit]

    pooled = best_chunk_per_document(fetch, 3)
    assert fetched == [40, 160]  # max(3 * 4, 40), then four times more
    assert [(h.document_key, h.chunk_id, h.rank) for h in pooled] == [
        ("p:A", 1, 1), ("p:B", 500, 2), ("p:C", 600, 3)]


def test_best_chunk_loop_stops_when_the_channel_runs_dry():
    fetched = []

    def fetch(limit):
        fetched.append(limit)
        return [hit("p:A", chunk=1), hit("p:A", score=0.5, chunk=2)]

    assert [h.chunk_id for h in best_chunk_per_document(fetch, 10)] == [1]
    assert fetched == [40]


def test_interleave_fuses_pools_and_keeps_inner_hits_with_their_pool_rank():
    gaulois = rrf({"bm25": [hit("gaulois:A", chunk=1), hit("gaulois:B", chunk=2)]})
    debats = rrf({"bm25": [hit("debats:C", chunk=3)]})
    fused = interleave({"gaulois": gaulois, "debats": debats}, limit=3)
    # A and C both come first in their pool: 1/61 each, the tie goes to the smaller key.
    assert [f.document_key for f in fused] == ["debats:C", "gaulois:A", "gaulois:B"]
    assert [f.score for f in fused] == pytest.approx([1 / 61, 1 / 61, 1 / 62])
    assert [f.rank for f in fused] == [1, 2, 3]
    b = fused[2]
    assert b.chunk_id == 2 and b.channel_ranks == {"bm25": 2, "sub_corpus_pool": 2}
