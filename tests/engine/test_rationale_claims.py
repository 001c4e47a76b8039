"""Rationales quote only words their passage prints: checked over every dev question.

Each dev question of the shipped demo slice runs through the offline engine on a small archive
of real OCR documents: its gold documents and the other documents of the same days (the
passages most likely to share the question's words, and to tempt a loose matcher).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent.engine import OfflinePolicy, run_investigation
from agent.engine.claims import quoted_words, unsupported_claims
from agent.engine.sinks import ListSink
from agent.engine.text import TermMatcher
from common.search import Hit, SubCorpusInfo
from tests.fakes.retriever import InMemoryRetriever, chunk

DEMO = Path(__file__).resolve().parents[2] / "demo" / "historiqa"
CHUNK_CHARS = 3000
SAME_DAY = 4  # documents of the gold days added to each question's archive


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


@pytest.fixture(scope="module")
def demo() -> tuple[list[dict], dict[str, dict], list[SubCorpusInfo]]:
    documents = {doc["doc_id"]: doc for doc in _jsonl(DEMO / "corpus.jsonl")}
    infos = []
    for slug in sorted({doc["collection"] for doc in documents.values()}):
        source = next(d["source"] for d in documents.values() if d["collection"] == slug)
        genre = "debates" if slug.startswith("debats") else "press"
        infos.append(SubCorpusInfo(slug, source, genre))
    return _jsonl(DEMO / "questions_dev.jsonl"), documents, infos


def _chunks(keys: list[str], documents: dict[str, dict]) -> list[Hit]:
    hits = []
    for number, key in enumerate(keys, start=1):
        doc = documents[key]
        text = doc["text"]
        for start in range(0, len(text), CHUNK_CHARS):
            hits.append(chunk(len(hits) + 1, number, key, doc["collection"], doc.get("date"),
                              text[start:start + CHUNK_CHARS]))
    return hits


def test_no_rationale_claims_a_word_its_passage_does_not_print_on_any_dev_question(demo):
    questions, documents, infos = demo
    by_day: dict[str, list[str]] = {}
    for key, doc in sorted(documents.items()):
        by_day.setdefault(str(doc.get("date")), []).append(key)
    quoted, false = 0, []
    for question in questions:
        gold = list(question["gold_ids"])
        days = {str(documents[key].get("date")) for key in gold}
        near = [k for day in sorted(days) for k in by_day[day] if k not in gold][:SAME_DAY]
        hits = _chunks(gold + near, documents)
        text_of = {hit.chunk_id: hit.text for hit in hits}
        sink = ListSink()
        run_investigation(question["question"], policy=OfflinePolicy(),
                          retriever=InMemoryRetriever(hits, infos), sink=sink)
        for verdict in sink.of("verdict"):
            quoted += len(quoted_words(verdict.rationale))
            false += [(question["qid"], verdict.chunk_id, word, verdict.rationale) for word in
                      unsupported_claims(verdict.rationale, text_of[verdict.chunk_id])]
    assert len(questions) == 443
    assert quoted > 2000, "too few quoted words for the check to mean anything"
    assert false == [], f"{len(false)} false claims, e.g. {false[:3]}"


def test_a_word_is_matched_whole_never_as_a_piece_of_a_longer_one():
    matcher = TermMatcher("Le principe de la loi ; les prin- cipes du droit.")
    assert matcher.written("princes") is None
    assert matcher.written("principe") == "principe"
    assert matcher.written("principes") == "prin- cipes"
    # A word cut at a line end is quoted on one line, and the check reads it so.
    cut = "Le pré-\nsident ouvre la séance."
    assert TermMatcher(cut).written("president") == "pré- sident"
    assert unsupported_claims("Reprend « pré- sident »", cut) == []
    ocr = TermMatcher("La Chambre vote l'expnlsion des Princes.")
    assert ocr.written("expulsion") == "expnlsion"  # one letter misread by the OCR
    assert ocr.written("princes") == "Princes" and ocr.written("prince") == "Princes"
    assert ocr.written("prin") is None


def test_a_rationale_quotes_the_passage_spelling_not_the_question_one():
    text = "La Chambre a voté hier l'expnlsion des Princes, par 315 voix contre 232."
    hits = [chunk(1, 1, "debats:1", "debats", "1887-06-12", text)]
    infos = [SubCorpusInfo("debats", "Chambre des députés, débats (Journal officiel)", "debates")]
    sink = ListSink()
    run_investigation("Quelle mesure la Chambre a-t-elle votée sur l'expulsion des princes ?",
                      policy=OfflinePolicy(), retriever=InMemoryRetriever(hits, infos),
                      sink=sink)
    rationales = [v.rationale for v in sink.of("verdict")]
    assert any("« expnlsion »" in r and "« Princes »" in r for r in rationales), rationales
    assert all(unsupported_claims(r, text) == [] for r in rationales)
    assert unsupported_claims("Reprend « princes »", "Le principe de la loi") == ["princes"]
