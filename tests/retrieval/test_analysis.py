"""The BM25 analyzer splits words glued together by OCR, stems French and folds accents."""

from common.french_dates import extract_date_window
from retrieval.analysis import AnalyzerOptions, analyze


def test_punctuation_glued_between_letters_splits_tokens():
    assert analyze("parole.M. Floquet") == analyze("parole M Floquet")
    assert "ricard" in analyze("M.Ricard a la parole")


def test_lower_to_upper_transition_splits_glued_words():
    assert analyze("laChambre") == analyze("la Chambre")
    assert analyze("laChambre") == ["chambre"]


def test_default_whoosh_pattern_keeps_glued_words_together():
    old = AnalyzerOptions(split_punct=False, split_case=False)
    assert analyze("M.Ricard", options=old) == ["m.ricard"]


def test_accents_fold_and_french_stems_match():
    assert analyze("députés") == analyze("deputes")
    assert analyze("le de la") == []


def test_french_dates_resolve_to_day_or_month_windows():
    window = extract_date_window("Que dit le journal le 26 février 1887 ?")
    assert (window.start.isoformat(), window.end.isoformat()) == ("1887-02-26", "1887-02-26")
    month = extract_date_window("En mars 1887, qui parle ?")
    assert (month.start.day, month.end.day) == (1, 31)
    assert extract_date_window("En 1887, qui parle ?") is None
