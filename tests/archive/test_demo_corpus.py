"""The demo corpus ships in the repository with its credit."""

from __future__ import annotations

import json

from tests.archive.conftest import ROOT, SHARED_EVAL

DEMO = ROOT / "demo"


def _ids(path) -> list[str]:
    return [json.loads(line)["doc_id"] for line in path.open(encoding="utf-8") if line.strip()]


def test_the_demo_corpus_holds_the_press_and_debates_slice_and_its_questions():
    full = _ids(DEMO / "historiqa" / "corpus.jsonl")
    press = _ids(DEMO / "historiqa-press" / "corpus.jsonl")
    assert len(full) == 295 and len(press) == 73
    assert set(press) <= set(full)
    for name in ("historiqa", "historiqa-press"):
        assert (DEMO / name / "questions_dev.jsonl").stat().st_size > 0
        shared = SHARED_EVAL / name / "corpus.jsonl"
        if shared.exists():
            assert shared.read_bytes() == (DEMO / name / "corpus.jsonl").read_bytes()


def test_notice_credits_historiqa():
    notice = (ROOT / "NOTICE").read_text(encoding="utf-8")
    assert "HistoriQA-ThirdRepublic" in notice and "hal-05438255" in notice
    assert "CC BY 4.0" in notice and "public domain" in notice


def test_the_demo_ships_the_distractors_of_the_realistic_pool():
    gold = set(_ids(DEMO / "historiqa" / "corpus.jsonl"))
    distractors = _ids(DEMO / "historiqa" / "distractors.jsonl")
    assert len(distractors) == 856 and not set(distractors) & gold
    assert all(key.startswith("debats_1887:") for key in distractors)
    shared = SHARED_EVAL / "historiqa" / "distractors.jsonl"
    if shared.exists():
        assert shared.read_bytes() == (DEMO / "historiqa" / "distractors.jsonl").read_bytes()
    assert "distractors.jsonl" in (ROOT / "NOTICE").read_text(encoding="utf-8")
