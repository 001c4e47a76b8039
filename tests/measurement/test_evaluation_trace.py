"""`evaluate --system trace` against an OpenAI-compatible endpoint: usage, cost, dry run."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command

from archive.services import ingest_file
from retrieval.channels import bm25, dense

# Threads (--workers 2) open their own connections: the data must be committed.
pytestmark = pytest.mark.django_db(transaction=True)

TOPIC = ("M. Lejeune défend à la Chambre le droit de douane sur les céréales ; la presse "
         "discute le prix du pain et la protection de l'agriculture.")
COLLECTIONS = [
    ("legaulois_1887_v1", "Le Gaulois", "1887-02-2"),
    ("debats_1887", "Chambre des députés, débats parlementaires (Journal officiel)",
     "1887-02-0"),
]
QUESTIONS = [
    "Comment M. Lejeune défend-il le droit sur les céréales à la Chambre ?",
    "Que dit la presse du prix du pain ?",
    "Quelle protection de l'agriculture la Chambre discute-t-elle en février 1887 ?",
]


@pytest.fixture
def archive(settings, tmp_path):
    """Six documents on one topic in a paper and the debates."""
    settings.TRACE_EMBEDDING_PROVIDER = "hash"
    settings.TRACE_BM25_DIR = tmp_path / "bm25"
    bm25.clear_cache()
    dense.set_embedder(None)
    lines = []
    for collection, source, day in COLLECTIONS:
        for number in (1, 2, 3):
            raw_id = f"{day}{number}"
            lines.append(json.dumps({
                "doc_id": f"{collection}:{raw_id}", "collection": collection, "source": source,
                "raw_id": raw_id, "date": raw_id, "text": f"{TOPIC} Numéro {raw_id}. " * 3},
                ensure_ascii=False))
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("\n".join(lines) + "\n", encoding="utf-8")
    ingest_file(path=corpus)
    questions = tmp_path / "questions.jsonl"
    questions.write_text("\n".join(json.dumps({
        "qid": f"q{index}", "question_type": "MH - Generic", "question": question,
        "gold_ids": ["legaulois_1887_v1:1887-02-21", "debats_1887:1887-02-01"]},
        ensure_ascii=False) for index, question in enumerate(QUESTIONS)) + "\n",
        encoding="utf-8")
    yield questions
    bm25.clear_cache()
    dense.set_embedder(None)


@pytest.fixture
def endpoint(settings, stub_llm):
    settings.TRACE_LLM_BASE_URL = stub_llm.url
    for role in ("PLANNER", "AGENT", "RERANKER"):
        setattr(settings, f"TRACE_LLM_{role}_MODEL", "stub-model")
    settings.TRACE_LLM_PRICE_INPUT_PER_M = 0.27
    settings.TRACE_LLM_PRICE_OUTPUT_PER_M = 1.10
    return stub_llm


def test_trace_evaluates_against_the_endpoint_with_usage_and_cost(archive, endpoint, tmp_path):
    out = tmp_path / "results"
    before = len(endpoint.state.requests)  # the stub endpoint serves the whole session
    call_command("evaluate", "--questions", str(archive), "--system", "trace", "--out", str(out),
                 "--workers", "2", "--no-progress", stdout=io.StringIO())
    result = json.loads((out / "results.json").read_text())
    rows = result["per_question"]
    assert [row["qid"] for row in rows] == ["q0", "q1", "q2"]
    for row in rows:
        extras = row["extras"]
        assert extras["llm_calls"] > 0 and extras["input_tokens"] > 0
        assert extras["output_tokens"] > 0
        expected = (extras["input_tokens"] * 0.27 + extras["output_tokens"] * 1.10) / 1e6
        assert extras["cost"] == pytest.approx(expected) and extras["cost"] > 0
    # Every call of the three questions (and of the warm-up run) reached the endpoint.
    assert len(endpoint.state.requests) - before >= sum(row["extras"]["llm_calls"] for row in rows)
    overall = result["overall"]
    assert overall["cost_mean"] == pytest.approx(
        sum(row["extras"]["cost"] for row in rows) / 3)
    table = (out / "results.md").read_text()
    assert "## Model use per question" in table
    assert all(f"| {row['qid']} | {row['extras']['llm_calls']} |" in table for row in rows)


def test_dry_run_prints_every_prompt_of_one_question_and_calls_no_model(archive, endpoint):
    before = len(endpoint.state.requests)  # the stub endpoint serves the whole session
    stdout = io.StringIO()
    call_command("evaluate", "--questions", str(archive), "--system", "trace", "--dry-run",
                 stdout=stdout)
    text = stdout.getvalue()
    assert QUESTIONS[0] in text and QUESTIONS[1] not in text
    for name in ("planner", "agent", "briefing"):
        assert f": {name} (role " in text
    assert "----- system -----" in text and "----- user -----" in text
    assert len(endpoint.state.requests) == before, "a dry run sends nothing to the model"


def test_dry_run_needs_no_endpoint_and_refuses_systems_without_prompts(archive, settings):
    from django.core.management.base import CommandError

    settings.TRACE_LLM_BASE_URL = None
    stdout = io.StringIO()
    call_command("evaluate", "--questions", str(archive), "--system", "trace", "--dry-run",
                 stdout=stdout)
    assert ": planner (role planner" in stdout.getvalue()
    with pytest.raises(CommandError, match="sends no prompts"):
        call_command("evaluate", "--questions", str(archive), "--system", "bm25", "--dry-run",
                     stdout=io.StringIO())
