"""Measuring cited answers: the reference answer's key entities, and the batch's two shares."""

from __future__ import annotations

import json

from django.core.management import call_command

from agent.investigations import services
from agent.models import AnswerDraft, Batch, Investigation
from agent.review import services as review_services
from measurement.evaluation.answers import holds_entity, key_entities


def test_key_entities_are_names_quotes_and_amounts():
    reference = ("L'Intransigeant — il ridiculise les arguments de M. Lejeune comme un "
                 "'bloc enfariné'; Le Gaulois défend le droit de 5 francs. Critique discrète.")
    assert key_entities(reference) == ["l'intransigeant", "bloc enfarine", "5 francs",
                                       "gaulois", "lejeune"]
    assert key_entities("Cette mesure ne change rien.") == []
    assert key_entities("La Société des Agriculteurs de France vote.") == [
        "societe des agriculteurs de france"]


def test_a_span_holds_an_entity_as_whole_words_case_and_accents_aside():
    entities = ["bloc enfarine", "lejeune"]
    assert holds_entity("un « Bloc enfariné » selon l’Intransigeant", entities)
    assert holds_entity("M. LEJEUNE parle", entities)
    assert not holds_entity("M. Lejeunesse parle", entities), "never a piece of a longer word"
    assert not holds_entity("un bloc de farine", entities)


def test_the_command_reports_both_shares_for_a_batch(tmp_path, users, finished, capsys):
    batch = Batch.objects.create(owner=users["alice"], name="dev")
    Investigation.objects.filter(pk=finished.pk).update(batch=batch, qid="q1",
                                                        question_type="comparative")
    running = services.investigation_create(owner=users["alice"], question="Autre ?",
                                            batch=batch, qid="q2", enqueue=False)
    Investigation.objects.filter(pk=running.pk).update(status="running")
    questions = tmp_path / "questions.jsonl"
    rows = [{"qid": "q1", "question": finished.question, "question_type": "comparative",
             "gold_ids": finished.ranked_keys, "answer": "Il s'agit du 'bloc enfariné'."},
            {"qid": "q2", "question": "Autre ?", "question_type": "generic",
             "gold_ids": ["x:1"], "answer": "Rien."}]
    questions.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    out = tmp_path / "answers.json"

    call_command("measure_answers", "--batch", str(batch.pk), "--questions", str(questions),
                 "--json", str(out))
    left_out = json.loads(out.read_text())
    assert left_out["questions"] == 0 and "q1: no draft" in " ".join(left_out["skipped"])

    doc = tmp_path / "README.md"
    doc.write_text("Intro.\n<!-- BEGIN generated: cited-answers -->\nstale figures\n"
                   "<!-- END generated: cited-answers -->\nAfter.\n", encoding="utf-8")
    call_command("measure_answers", "--batch", str(batch.pk), "--questions", str(questions),
                 "--draft-missing", "--json", str(out), "--write-doc", str(doc))
    figures = json.loads(out.read_text())
    assert AnswerDraft.objects.filter(investigation=finished).count() == 1
    written = doc.read_text(encoding="utf-8")
    assert "stale figures" not in written and written.startswith("Intro.") and "After." in written
    assert "`manage.py measure_answers --batch" in written and "--draft-missing`" in written
    assert ("1 finished investigations measured; runs by offline policy (no LLM); answers by "
            "the extractive (no model) drafter; gold-only pool") in written
    assert "| all: 1 | 1 | 2 | 0.500 | 1.000 |" in written
    # Two quoted sentences: the Intransigeant's prints "bloc enfariné", the Gaulois's does not.
    assert figures["questions"] == 1 and figures["sentences"] == 2
    assert figures["sentence_share"] == 0.5 and figures["question_share"] == 1.0
    assert figures["scores"][0]["entities"] == ["bloc enfarine"]
    assert figures["skipped"] == ["q2: running"]
    printed = capsys.readouterr().out
    assert "| all: 1 | 1 | 2 | 0.500 | 1.000 |" in printed
    assert "| comparative: 1 | 1 | 2 | 0.500 | 1.000 |" in printed


def test_a_run_that_accepted_nothing_counts_as_an_answer_holding_nothing(
        tmp_path, users, finished):
    batch = Batch.objects.create(owner=users["alice"], name="dev")
    Investigation.objects.filter(pk=finished.pk).update(batch=batch, qid="q1")
    for key in finished.ranked_keys:
        review_services.verdict_override(investigation=finished, user=users["alice"],
                                         document_key=key,
                                  decision="reject")
    questions = tmp_path / "questions.jsonl"
    questions.write_text(json.dumps({"qid": "q1", "question": "q", "question_type": "generic",
                                     "gold_ids": ["a:1"], "answer": "M. Lejeune parle."}),
                         encoding="utf-8")
    out = tmp_path / "answers.json"
    call_command("measure_answers", "--batch", str(batch.pk), "--questions", str(questions),
                 "--draft-missing", "--json", str(out))
    figures = json.loads(out.read_text())
    assert figures["questions"] == 1 and figures["question_share"] == 0.0
    assert figures["scores"][0]["drafted"] is False
