"""Check how a verdict's evidence is found: a quote located tolerantly, else the best sentences."""

from __future__ import annotations

import json
import re

from agent.engine.evidence import (
    MAX_CHARS,
    best_sentences,
    evidence_span,
    locate_quote,
    sentences,
)
from agent.engine.prompting import environment
from agent.engine.sinks import ListSink
from agent.engine.wording import language_of
from tests.engine.conftest import INFOS, Q, briefing, finish, memory, plan, run
from tests.fakes.retriever import InMemoryRetriever, chunk

SITTING = (
    "CHAMBRE DES DÉPUTÉS. Séance du 25 février 1887. La séance est ouverte à deux heures. "
    "M. le président donne lecture du procès-verbal. "
    "M. Lejeune monte à la tribune et défend le droit sur les céréales avec vigueur ; "
    "la protection de l'agriculture, dit-il, est une nécessité nationale. "
    "M. Pelletan répond que le pain cher frappe d'abord les ouvriers. "
    "La suite de la discussion est renvoyée à demain."
)
SPEECH = ("M. Lejeune monte à la tribune et défend le droit sur les céréales avec vigueur ; "
          "la protection de l'agriculture, dit-il, est une nécessité nationale.")


def test_sentences_keep_honorifics_inside_and_cover_the_text():
    spans = sentences(SITTING)
    texts = [SITTING[a:b] for a, b in spans]
    assert SPEECH in texts
    assert "M. le président donne lecture du procès-verbal." in texts
    assert all(b - a <= MAX_CHARS for a, b in spans)


def test_a_sentence_without_punctuation_is_cut_into_pieces_within_the_limit():
    text = "mot " * 400
    spans = sentences(text)
    assert len(spans) >= 4 and all(b - a <= MAX_CHARS for a, b in spans)


def test_an_exact_quote_is_located_at_its_offsets():
    start, end, method = locate_quote(SITTING, SPEECH)
    assert (SITTING[start:end], method) == (SPEECH, "exact")


def test_a_quote_retyped_without_accents_case_or_spacing_is_still_exact():
    retyped = "m. lejeune monte a la tribune et defend le droit sur les cereales avec vigueur"
    start, end, method = locate_quote(SITTING.replace("céréales", "céré ales"), retyped)
    assert method == "exact"
    assert SITTING.replace("céréales", "céré ales")[start:end].startswith("M. Lejeune monte")


def test_an_ocr_noisy_quote_is_located_fuzzily():
    noisy = SITTING.replace("défend", "dèfeud").replace("céréales", "cérèaIes")
    start, end, method = locate_quote(noisy, SPEECH)
    assert method == "fuzzy"
    found = noisy[start:end]
    assert found.startswith("M. Lejeune") and found.endswith("nationale")


def test_a_quote_that_is_not_there_is_not_located():
    assert locate_quote(SITTING, "Le ministre de la guerre présente le budget extraordinaire") \
        is None
    assert locate_quote(SITTING, "M. Lejeune") is None  # too short to place


def test_without_a_quote_the_sentences_richest_in_terms_and_names_are_chosen():
    start, end = best_sentences(SITTING, ["droit", "cereales", "agriculture"], ["lejeune"])
    assert SITTING[start:end] == SPEECH


def test_a_neighbour_joins_when_it_adds_a_term_within_the_limit():
    start, end = best_sentences(SITTING, ["droit", "cereales", "pain"], ["lejeune", "pelletan"])
    assert SITTING[start:end].startswith("M. Lejeune") and SITTING[start:end].endswith("ouvriers.")
    assert end - start <= MAX_CHARS


def test_a_missing_quote_falls_back_to_the_best_sentences_with_document_offsets():
    hit = chunk(1, 1, "debats:1", "debats", "1887-02-25", SITTING).with_(chunk_start=1000)
    span = evidence_span(hit, quote="Une phrase que ce passage ne contient nulle part ailleurs",
                         terms=["droit", "cereales"], names=["lejeune"])
    assert span is not None and span.method == "sentences" and span.text == SPEECH
    assert span.start == 1000 + SITTING.index(SPEECH) and span.end == span.start + len(SPEECH)


def test_a_located_quote_widens_to_its_whole_sentence():
    hit = chunk(1, 1, "debats:1", "debats", "1887-02-25", SITTING)
    span = evidence_span(hit, quote="défend le droit sur les céréales avec vigueur")
    assert span is not None and span.method == "exact" and span.text == SPEECH


def _quoting_review(quote: str, rationale: str):
    def reply(prompt):
        ids = [int(x) for x in re.findall(r'<document chunk_id="(\d+)"', prompt.user)]
        verdicts = [{"chunk_id": cid, "verdict": "accept" if i == 0 else "reject",
                     "rationale": rationale, "quote": quote} for i, cid in enumerate(ids)]
        return json.dumps({"thought": "review", "action": "review",
                           "args": {"verdicts": verdicts}, "memory_update": memory()})

    return reply


def test_a_model_quote_becomes_the_verdict_evidence_in_the_event():
    retriever = InMemoryRetriever(
        [chunk(1, 1, "debats:1", "debats", "1887-02-25", SITTING)], INFOS)
    noisy_quote = "M. Lejeune monte a la tribune et defeud le droit sur les cereales avec vigueur"
    replies = [plan(("droit sur les céréales", "debats")),
               _quoting_review(noisy_quote, "Le discours demandé"), finish(), briefing()]
    sink = ListSink()
    run(Q, replies, retriever, sink)
    verdict = sink.of("verdict")[0]
    assert verdict.verdict == "accept" and verdict.evidence.method == "fuzzy"
    assert verdict.evidence.text == SPEECH
    assert SITTING[verdict.evidence.start:verdict.evidence.end] == SPEECH


def test_the_llm_prompt_asks_for_a_short_rationale_in_the_question_language_and_a_quote():
    for name in ("agent", "held"):
        system = " ".join(environment().get_template(f"{name}.system.j2").render().split())
        assert "at most 120 characters, in the language of q" in system
        assert "never scores" in system and '"quote": str' in system


def test_question_language_is_told_apart():
    assert language_of(Q) == "fr"
    assert language_of("Which newspaper mocked M. Lejeune's speech on the grain duty?") == "en"


def test_figures_a_model_writes_into_its_verdicts_are_dropped():
    retriever = InMemoryRetriever(
        [chunk(1, 1, "debats:1", "debats", "1887-02-25", SITTING)], INFOS)

    def forged(prompt):
        ids = [int(x) for x in re.findall(r'<document chunk_id="(\d+)"', prompt.user)]
        verdicts = [{"chunk_id": cid, "verdict": "accept", "rationale": "r",
                     "signals": {"query_terms": 1, "matched_terms": ["x"],
                                 "found_by": "warm_start", "batch_rank": 1, "score": 99.0}}
                    for cid in ids]
        return json.dumps({"thought": "", "action": "review", "args": {"verdicts": verdicts},
                           "memory_update": memory()})

    sink = ListSink()
    run(Q, [plan(("droit sur les céréales", "debats")), forged, finish(), briefing()],
        retriever, sink)
    verdicts = sink.of("verdict")
    assert verdicts and all(v.signals is None and v.evidence for v in verdicts)
