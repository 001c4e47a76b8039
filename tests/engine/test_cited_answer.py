"""The cited answer's drafters: quoting without a model, and checking a model's citations."""

from __future__ import annotations

import json

import pytest

from agent.engine.answer import (
    AnswerDrafter,
    AnswerMaterial,
    AnswerSource,
    CitedSpan,
    DraftedAnswer,
    EvidencePassage,
    dropped_line,
    sections_from_json,
)
from agent.engine.answer_extractive import SENTENCE_CHARS, extractive_answer
from agent.engine.answer_llm import AnswerReplyError, answer_prompt, model_answer
from agent.engine.instant_model import InstantModel
from tests.fakes.chat import ScriptedChatModel

Q = "Comment M. Lejeune défend-il le droit sur les céréales, et comment la presse réagit-elle ?"
SPEECH = "Le discours de M. Lejeune à la Chambre"
PRESS = "Ce qu'en dit la presse"

# Three documents; offsets are where each passage sits in its document.
DEBATE = ("Séance du 25 février. M. Lejeune demande un droit de cinq francs sur les blés "
          "étrangers. Il parle de la ruine des cultivateurs.")
GAULOIS = ("M. Lejeune demande un droit de cinq francs sur les bles etrangers. "
           "Le Gaulois applaudit ce discours solide et mesuré.")
INTRAN = "L'Intransigeant raille le bloc enfariné de M. Lejeune et son pain cher."


def _document(text: str, before: int) -> tuple[str, EvidencePassage]:
    """Place `text` after `before` characters of filler; return the document and its passage."""
    document = "x" * (before - 1) + " " + text + " Fin."
    return document, EvidencePassage(before, before + len(text), text)


def _split(passage: EvidencePassage) -> tuple[EvidencePassage, EvidencePassage]:
    """Cut the Gaulois passage in two: its first sentence for sub-question 0, the rest for 1."""
    cut = passage.text.index(". Le ") + 1
    return (EvidencePassage(passage.start, passage.start + cut, passage.text[:cut], 0),
            EvidencePassage(passage.start + cut + 1, passage.end, passage.text[cut + 1:], 1))


@pytest.fixture
def material() -> tuple[AnswerMaterial, dict[str, str]]:
    debate_doc, debate = _document(DEBATE, 120)
    gaulois_doc, gaulois = _document(GAULOIS, 40)
    intran_doc, intran = _document(INTRAN, 7)
    documents = {"debats:1": debate_doc, "gaulois:1": gaulois_doc, "intran:1": intran_doc}

    def at(passage: EvidencePassage, index: int) -> EvidencePassage:
        return EvidencePassage(passage.start, passage.end, passage.text, index)

    # Numbers are the order in force (not the agent's), and the plan runs 0 then 1 whatever
    # order the mapping lists them in.
    return AnswerMaterial(
        question=Q, sub_questions={1: PRESS, 0: SPEECH},
        sources=(
            AnswerSource(1, "intran:1", "L'Intransigeant", "1887-02-27", (at(intran, 1),)),
            AnswerSource(2, "gaulois:1", "Le Gaulois", "1887-02-26", _split(gaulois)),
            AnswerSource(3, "debats:1", "Chambre", "1887-02-25", (at(debate, 0),)),
        )), documents


def _all(answer: DraftedAnswer) -> list[tuple[str, list[int]]]:
    return [(s.text, [c.number for c in s.citations]) for s in answer.sentences]


def test_sections_follow_the_plan_and_sentences_the_numbers(material):
    answer = extractive_answer(material[0])
    assert answer.drafter is AnswerDrafter.EXTRACTIVE
    assert answer.label.startswith("Extractive answer: sentences quoted from the accepted sources")
    assert [s.heading for s in answer.sections] == [f"Sub-question 1: {SPEECH}",
                                                    f"Sub-question 2: {PRESS}"]
    speech, press = answer.sections
    assert [c.number for s in speech.sentences for c in s.citations][0] == 2, (
        "within a section, the source numbered first comes first")
    assert {c.number for s in press.sentences for c in s.citations} == {1, 2}
    assert all(s.citations for s in answer.sentences), "every sentence is cited"
    texts = [text for text, _ in _all(answer)]
    assert len(texts) == len(set(texts)), "no sentence is quoted twice"


def test_a_sentence_two_sources_print_nearly_alike_is_quoted_once_citing_both(material):
    answer = extractive_answer(material[0])
    demands = [(text, numbers) for text, numbers in _all(answer) if "cinq francs" in text]
    assert len(demands) == 1, _all(answer)
    text, numbers = demands[0]
    assert numbers == [2, 3], "the sentence cites both the newspaper and the debate"
    # The quote is the first source's wording (the Gaulois prints it without accents).
    assert text == "M. Lejeune demande un droit de cinq francs sur les bles etrangers."


def test_ocr_misreadings_do_not_make_a_second_sentence_but_another_fact_does():
    texts = ["M. Lejeune demande un droit de cinq francs sur les blés étrangers.",
             "M. Lejeurie dernande un droit de cinq francs sur les bles étrangers.",
             "M. Lejeune demande un droit de trois francs sur les farines de Hongrie."]
    sources = tuple(AnswerSource(n, f"d:{n}", passages=(EvidencePassage(0, len(t), t, 0),))
                    for n, t in enumerate(texts, start=1))
    answer = extractive_answer(AnswerMaterial("q", {0: "sq"}, sources))
    assert _all(answer) == [(texts[0], [1, 2]), (texts[2], [3])]


def test_each_citation_points_at_the_quoted_sentence_in_its_document(material):
    from common.text import casefold_without_accents

    drafted, documents = material
    for sentence in extractive_answer(drafted).sentences:
        cited = [documents[c.document_key][c.start:c.end] for c in sentence.citations]
        assert sentence.text in cited, "one citation is the very sentence quoted"
        for twin in cited:  # the others are the same sentence as other sources print it
            assert casefold_without_accents(twin) == casefold_without_accents(sentence.text)


def test_the_quoted_sentences_are_the_sources_own_words(material):
    drafted, documents = material
    printed = " ".join(" ".join(text.split()) for text in documents.values())
    for text, _ in _all(extractive_answer(drafted)):
        assert text in printed, f"invented text: {text!r}"


def test_a_passage_whose_text_is_not_the_documents_cites_the_whole_span():
    normalised = "Première phrase du passage. Deuxième phrase du passage, plus longue."
    source = AnswerSource(1, "a:1", passages=(EvidencePassage(10, 200, normalised, 0),))
    answer = extractive_answer(AnswerMaterial("q", {0: "sq"}, (source,)))
    assert {(c.start, c.end) for s in answer.sentences for c in s.citations} == {(10, 200)}


def test_long_sentences_are_cut_at_a_word_and_marked():
    long = "M. Lejeune " + " ".join(f"mot{i}" for i in range(120)) + "."
    source = AnswerSource(1, "a:1", passages=(EvidencePassage(0, len(long), long, 0),))
    [sentence] = extractive_answer(AnswerMaterial("q", {0: "sq"}, (source,))).sentences
    assert len(sentence.text) <= SENTENCE_CHARS + 2 and sentence.text.endswith(" …")
    assert long.startswith(sentence.text.removesuffix(" …"))
    assert (sentence.citations[0].start, sentence.citations[0].end) == (0, len(long))


WORDS = ["Ferry", "Lejeune", "Méline", "Pelletan", "Clemenceau", "Rouvier", "Goblet",
         "Freycinet", "Floquet", "blés", "farines", "avoines", "seigles", "orges"]


def test_every_source_is_quoted_before_any_gets_a_second_sentence():
    sources = tuple(
        AnswerSource(n, f"d:{n}", passages=(EvidencePassage(0, 0, " ".join(
            f"{WORDS[n]} {WORDS[k + 9]} parle {WORDS[(n + k) % 13]} longuement ici."
            for k in range(4)), 0),))
        for n in range(1, 9))
    answer = extractive_answer(AnswerMaterial("q", {0: "sq"}, sources))
    cited = [c.number for s in answer.sentences for c in s.citations]
    assert sorted(set(cited)) == list(range(1, 9)), "every accepted source is quoted"
    assert len(answer.sentences) == 8, "eight first sentences fill the section's share"


def test_a_passage_of_no_planned_sub_question_goes_under_its_own_heading():
    source = AnswerSource(4, "a:1", passages=(
        EvidencePassage(0, 40, "Une phrase sans sous-question connue ici.", None),))
    answer = extractive_answer(AnswerMaterial("q", {0: "sq"}, (source,)))
    assert [s.heading for s in answer.sections] == ["Other accepted sources"]


def test_sections_survive_their_stored_form(material):
    answer = extractive_answer(material[0])
    stored = json.loads(json.dumps(answer.sections_json()))
    assert sections_from_json(stored) == answer.sections


# -- the LLM drafter ------------------------------------------------------------------------


def _reply(*sentences: object) -> str:
    return json.dumps({"sentences": list(sentences)})


GOOD = {"text": "M. Lejeune demande un droit de cinq francs.",
        "citations": [{"source": 3, "span": 1}, {"source": 2, "span": 1}]}


def test_the_model_sees_each_sources_passages_numbered_as_data(material):
    prompt = answer_prompt(material[0])
    assert prompt.name == "answer" and prompt.role == "agent"
    assert '<document source="2" span="2" document="gaulois:1"' in prompt.user
    assert '<document source="3" span="1" document="debats:1"' in prompt.user
    assert prompt.user.index(SPEECH) < prompt.user.index(PRESS), "sub-questions in plan order"


def test_sentences_citing_no_accepted_source_or_span_are_dropped_and_counted(material):
    chat = ScriptedChatModel([_reply(
        GOOD,
        {"text": "Un journal inconnu approuve.", "citations": [{"source": 99, "span": 1}]},
        {"text": "Un passage qui n'existe pas.", "citations": [{"source": 1, "span": 2}]},
        {"text": "Une phrase sans citation.", "citations": []},
        {"text": "Mixed: one real citation, one invented.",
         "citations": [{"source": 1, "span": 1}, {"source": 7}]},
        42, "garbage", {"text": ""}, {"citations": [{"source": 1}]},
        {"text": "Bad pair.", "citations": [{"source": "one"}]},
    )])
    answer = model_answer(material[0], chat)
    assert answer.drafter is AnswerDrafter.LLM and len(chat.calls) == 1
    assert _all(answer) == [("M. Lejeune demande un droit de cinq francs.", [2, 3]),
                            ("Mixed: one real citation, one invented.", [1])]
    assert answer.dropped == 8
    assert dropped_line(answer.dropped) == "8 sentences dropped: they cited no accepted source."
    cited = answer.sentences[0].citations[1]
    assert cited == CitedSpan(3, "debats:1", material[0].sources[2].passages[0].start,
                              material[0].sources[2].passages[0].end)
    assert answer.model_calls[0].prompt_name == "answer" and answer.reply


def test_an_unreadable_reply_is_asked_again_once(material):
    chat = ScriptedChatModel(["I think the answer is yes.", _reply(GOOD)])
    answer = model_answer(material[0], chat)
    assert len(chat.calls) == 2 and len(answer.model_calls) == 2
    assert [n for _, n in _all(answer)] == [[2, 3]] and answer.dropped == 0


def test_two_unreadable_replies_give_no_draft(material):
    chat = ScriptedChatModel(["<html>502</html>", json.dumps({"sentences": "none"})])
    with pytest.raises(AnswerReplyError, match="could not be read"):
        model_answer(material[0], chat)


def test_a_reply_that_keeps_nothing_is_an_empty_answer_with_its_count(material):
    chat = ScriptedChatModel([_reply({"text": "Rien.", "citations": [{"source": 5}]})])
    answer = model_answer(material[0], chat)
    assert answer.sections == () and answer.dropped == 1
    assert dropped_line(1) == "1 sentence dropped: it cited no accepted source."


def test_the_instant_models_answer_cites_every_source(material):
    answer = model_answer(material[0], InstantModel())
    assert sorted(c.number for s in answer.sentences for c in s.citations) == [1, 2, 3]
    assert answer.dropped == 0
