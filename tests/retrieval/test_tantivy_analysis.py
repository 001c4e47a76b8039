"""Tantivy analyses texts as the whoosh analyzer does and ranks with whoosh's BM25 parameters."""

from __future__ import annotations

import pytest

from common.search import SearchRequest
from retrieval.analysis import DEFAULT_OPTIONS, AnalyzerOptions, analyze
from retrieval.bm25.base import IndexChanges, IndexedChunk
from retrieval.bm25.tantivy_analysis import build_text_analyzer, prepare
from retrieval.bm25.tantivy_engine import TantivyIndex
from retrieval.bm25.whoosh_engine import WhooshIndex

TEXTS = [
    "M. le président. La parole est à M.Ricard sur laChambre des députés.",
    "Le ministre de la guerre, général Boulanger, répond à l'interpellation.",
    "Élections municipales à Paris : le conseil vote l'emprunt et la taxe.",
    "On lit dans le Gaulois : « La séance a été levée à six heures. »",
    "Les députés de la Seine et le préfet discutent le budget de la Seine.",
    "budget budget budget de la guerre, les crédits du ministère.",
]


def test_rust_analyzer_gives_the_whoosh_terms():
    analyzer = build_text_analyzer("fr", DEFAULT_OPTIONS)
    for text in TEXTS:
        assert list(analyzer.analyze(prepare(text, DEFAULT_OPTIONS))) == analyze(text)


def test_ligature_folds_to_two_letters():
    analyzer = build_text_analyzer("fr", DEFAULT_OPTIONS)
    assert list(analyzer.analyze("Les vœux du cœur")) == ["les", "voeux", "coeur"]


def test_stemming_is_refused():
    with pytest.raises(ValueError, match="stemming"):
        build_text_analyzer("fr", AnalyzerOptions(stem=True))


def _chunks() -> tuple[IndexedChunk, ...]:
    return tuple(IndexedChunk(chunk_id=i + 1, document_id=i + 1, document_key=f"demo:{i}",
                              sub_corpus="demo", language="fr", day=None, text=text)
                 for i, text in enumerate(TEXTS))


@pytest.mark.parametrize("query", ["budget de la guerre", "députés de la Seine", "séance levée"])
def test_rescored_ranking_equals_whoosh(tmp_path, query):
    tantivy_index = TantivyIndex.create(tmp_path / "t", DEFAULT_OPTIONS, 1.5, 0.9)
    whoosh_index = WhooshIndex.create(tmp_path / "w", DEFAULT_OPTIONS, 1.5, 0.9)
    for index in (tantivy_index, whoosh_index):
        index.apply(IndexChanges((), _chunks()))
    request = SearchRequest(channel="bm25")
    from_tantivy = tantivy_index.search(query, request, 10)
    from_whoosh = whoosh_index.search(query, request, 10)
    assert [m.chunk_id for m in from_tantivy] == [m.chunk_id for m in from_whoosh]
    for mine, theirs in zip(from_tantivy, from_whoosh, strict=True):
        assert mine.score == pytest.approx(theirs.score, rel=0.02)
    whoosh_index.close()
    tantivy_index.close()
