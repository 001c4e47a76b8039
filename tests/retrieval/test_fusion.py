"""RRF and max-pooling on hand-computed examples (no database)."""

import pytest

from retrieval.fusion import max_pool, rrf
from retrieval.types import Constraints, DateWindow, Hit


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
    assert a.chunk_ids == {"bm25": 1, "dense": 2}
    assert a.best_chunk_id == 1


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


def test_max_pool_cap_counts_documents_not_chunks():
    hits = [hit("p:A", score=1.0, chunk=1), hit("p:A", score=0.9, chunk=2), hit("p:B", score=0.5)]
    assert [h.document_key for h in max_pool(hits, cap=2)] == ["p:A", "p:B"]


def test_constraints_normalise_iterables_and_reject_bad_values():
    c = Constraints(sub_corpora=["a"], exclude_chunk_ids=[3], cap=5)
    assert c.sub_corpora == ("a",) and c.exclude_chunk_ids == (3,)
    with pytest.raises(ValueError):
        Constraints(cap=0)
    import datetime as dt

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
