"""Each channel applies constraints inside its own query and pools chunks per document."""

import pytest

from archive.bulk_writes import vector_literal
from common.search import DateWindow, SearchRequest
from retrieval import channels
from retrieval.channels import dense, temporal
from retrieval.channels.temporal import TemporalChannel
from tests.retrieval.conftest import AxisEmbedder, axis_vector, bump_revision

pytestmark = pytest.mark.django_db


@pytest.fixture
def corpus(archive, day):
    docs = {
        "g1": archive.document("gaulois", ["Le ministre Floquet parle des tarifs douaniers.",
                                           "Les tarifs sur les blés sont votés."],
                               date=day(2, 1), vectors=[axis_vector(1, 0.1), axis_vector(1, 0.5)]),
        "g2": archive.document("gaulois", ["Floquet et les blés, encore des tarifs."],
                               date=day(2, 10), vectors=[axis_vector(1, 0.3)]),
        "i1": archive.document("intran", ["Floquet répond sur les tarifs des blés."],
                               date=day(2, 3), vectors=[axis_vector(0.2, 1)]),
        "d1": archive.document("debats", ["M.Floquet a la parole. laChambre vote les tarifs."],
                               date=day(3, 1), vectors=[axis_vector(0, 1)]),
    }
    bump_revision()
    return docs


def keys(hits):
    return [h.document_key.split(":")[0] for h in hits]


def run(channel, query="", **restrictions):
    """Search one registered channel with a request built from keyword restrictions."""
    request = SearchRequest(channel=channel, query=query, **restrictions)
    return channels.get(channel).search(request)


@pytest.mark.parametrize("channel", ["bm25", "dense", "substring", "temporal"])
def test_channel_honours_sub_corpus_and_exclusions_inside_the_query(corpus, channel, day):
    query = {"bm25": "Floquet tarifs", "dense": "axis0 axis1", "substring": "tarifs"}.get(channel)
    window = DateWindow.around(day(2, 2)) if channel == "temporal" else None

    def run_channel(**restrictions):
        return run(channel, query or "", window=window, **restrictions)

    everything = run_channel(limit=10)
    assert {h.document_id for h in everything} == {d.pk for d in corpus.values()}
    assert all(h.channel == channel for h in everything)
    assert [h.rank for h in everything] == [1, 2, 3, 4]
    assert [h.channel_ranks for h in everything] == [{channel: r} for r in (1, 2, 3, 4)]
    assert all(h.channel_chunks == {channel: h.chunk_id} for h in everything)

    only_gaulois = run_channel(sub_corpora=["gaulois"], limit=10)
    assert set(keys(only_gaulois)) == {"gaulois"} and len(only_gaulois) == 2

    g1 = corpus["g1"]
    first, second = g1.chunks.order_by("ordinal")
    without_first = run_channel(sub_corpora=["gaulois"], exclude_chunk_ids=[first.pk], limit=10)
    pooled_g1 = [h for h in without_first if h.document_id == g1.pk]
    assert pooled_g1 and pooled_g1[0].chunk_id == second.pk  # sibling chunk stays reachable

    without_key = run_channel(exclude_document_keys=[g1.key], limit=10)
    assert g1.pk not in {h.document_id for h in without_key} and len(without_key) == 3

    allowed = run_channel(document_ids=[corpus["i1"].pk, corpus["d1"].pk], limit=10)
    assert {h.document_id for h in allowed} == {corpus["i1"].pk, corpus["d1"].pk}


@pytest.mark.parametrize("channel", ["bm25", "dense"])
def test_minority_sub_corpus_is_not_truncated_by_the_cap(archive, channel):
    # Twenty majority documents beat the single minority one globally; a global top-5 then
    # filtered would return nothing for the minority sub-corpus.
    for n in range(20):
        archive.document("majority", [f"élections élections élections scrutin {n}"],
                         vectors=[axis_vector(1, 0.01 * n)])
    minority = archive.document("minority", ["quelques mots sur les élections et le reste"],
                                vectors=[axis_vector(0.1, 1)])
    bump_revision()
    query = "élections" if channel == "bm25" else "axis0"
    global_top = run(channel, query, limit=5)
    assert minority.pk not in {h.document_id for h in global_top}
    constrained = run(channel, query, sub_corpora=["minority"], limit=5)
    assert [h.document_id for h in constrained] == [minority.pk]


def test_max_pooling_counts_a_document_once_by_its_best_chunk(archive):
    doc = archive.document("p", ["rien ici", "Panama Panama Panama", "Panama une fois"],
                           vectors=[axis_vector(0, 1), axis_vector(1), axis_vector(1, 1)])
    bump_revision()
    hits = run("bm25", "Panama", limit=5)
    assert len(hits) == 1 and hits[0].chunk_id == doc.chunks.get(ordinal=1).pk
    dense_hits = run("dense", "axis0", limit=5)
    assert len(dense_hits) == 1 and dense_hits[0].chunk_id == doc.chunks.get(ordinal=1).pk


def test_dense_filtered_query_still_returns_cap_documents_through_hnsw(archive):
    from django.db import connection

    for n in range(300):
        archive.document("big", [f"texte {n}"], vectors=[axis_vector(1, 0.001 * n, 0.5)])
    small = [archive.document("small", [f"petit {n}"], vectors=[axis_vector(0.01 * n, 1, 0.2)])
             for n in range(12)]
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE archive_chunk")
        cursor.execute("SET enable_seqscan = off")  # force the HNSW index, as on a large table
        try:
            hits = run("dense", "axis0", sub_corpora=["small"], limit=10)
            cursor.execute(
                "EXPLAIN SELECT id FROM archive_chunk ORDER BY embedding <=> %s::vector LIMIT 5",
                [vector_literal(AxisEmbedder().embed_queries(["axis0"])[0])],
            )
            plan = " ".join(row[0] for row in cursor.fetchall())
        finally:
            cursor.execute("SET enable_seqscan = on")
    assert "chunk_embedding_hnsw" in plan
    assert len(hits) == 10
    assert {h.document_id for h in hits} <= {d.pk for d in small}


def test_dense_scores_chunks_one_by_one_when_the_graph_walk_comes_back_short(archive, monkeypatch):
    # A walk that gives up early (few index entries allowed) stands for one lost among the
    # entries of deleted chunks, or for a filter the nearest thousands of chunks do not meet.
    for n in range(60):
        archive.document("big", [f"texte {n}"], vectors=[axis_vector(1, 0.001 * n, 0.5)])
    small = [archive.document("small", [f"petit {n}"], vectors=[axis_vector(0.01 * n, 1, 0.2)])
             for n in range(12)]
    monkeypatch.setattr(dense, "EF_SEARCH", 5)
    monkeypatch.setattr(dense, "MAX_SCAN_TUPLES", 5)
    hits = run("dense", "axis0", sub_corpora=["small"], limit=10)
    expected = sorted(small, key=lambda d: -0.01 * int(d.text.split()[1]))[:10]
    assert [h.document_id for h in hits] == [d.pk for d in expected]


def test_dense_ignores_vectors_of_another_embedding_model(archive):
    doc = archive.document("p", ["x"], vectors=[axis_vector(1)])
    doc.chunks.update(embedding_model="other-model")
    assert run("dense", "axis0", limit=5) == []


def test_temporal_orders_by_decay_and_window_hits_score_one(corpus, day):
    channel = TemporalChannel(half_life_days=7)
    hits = channel.search(SearchRequest("temporal", window=DateWindow.around(day(2, 2))))
    assert keys(hits) == ["gaulois", "intran", "gaulois", "debats"]  # 1, 1, 8 and 27 days away
    assert hits[0].score == pytest.approx(0.5 ** (1 / 7))
    assert hits[2].score == pytest.approx(0.5 ** (8 / 7))
    window = channel.search(SearchRequest("temporal", window=DateWindow(day(2, 1), day(2, 3))))
    assert [h.score for h in window[:2]] == [1.0, 1.0]
    assert {h.document_id for h in window[:2]} == {corpus["g1"].pk, corpus["i1"].pk}
    assert temporal.decay(7, 7) == pytest.approx(0.5)


def test_substring_exact_phrase_ignores_accents_and_ranks_first(archive):
    exact = archive.document("p", ["La Chambre des députés a voté."])
    archive.document("p", ["La Chambre des deputations, autre chose."])
    hits = run("substring", "chambre des deputes", limit=5)
    assert hits[0].document_id == exact.pk and hits[0].score >= 1.0
    exact_only = run("substring", "chambre des deputes", limit=5, mode="exact")
    assert [h.document_id for h in exact_only] == [exact.pk]


def test_substring_fuzzy_matches_ocr_misspellings_and_glued_words(archive):
    damaged = archive.document("debats", ["M.Floquet monte à latribune ; laChanbre des dépntés"])
    archive.document("debats", ["Rien à voir avec le sujet du jour."])
    hits = run("substring", "Chambre des députés", limit=5, mode="fuzzy")
    assert [h.document_id for h in hits] == [damaged.pk]
    assert run("substring", "Chambre des députés", limit=5, mode="exact") == []


def test_bm25_finds_words_glued_by_ocr(archive):
    debate = archive.document("debats", ["M.Ricard a la parole. laChambre adopte."])
    bump_revision()
    assert [h.document_id for h in run("bm25", "Ricard", limit=5)] == [debate.pk]
    assert [h.document_id for h in run("bm25", "chambre", limit=5)] == [debate.pk]
