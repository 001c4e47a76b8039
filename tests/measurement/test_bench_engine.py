"""The engine benchmark: an in-memory archive, the metrics module, a generated table."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command


def test_the_benchmark_times_every_policy_and_judge_on_the_synthetic_archive(tmp_path):
    doc = tmp_path / "README.md"
    doc.write_text("<!-- BEGIN generated: bench-engine -->\n<!-- END generated: bench-engine -->\n")
    out = io.StringIO()
    call_command("bench_engine", "--limit", "2", "--write-doc", str(doc), stdout=out)
    rows = [line for line in out.getvalue().splitlines() if line.startswith("| engine")]
    # The LLM policy, the offline policy with the rule judge, and with the shipped learnt judge.
    assert len(rows) == 3 and all("| – | – |" in row for row in rows)
    assert "rule judge" in rows[1] and "learnt judge" in rows[2]
    written = doc.read_text()
    assert "`manage.py bench_engine --limit 2 --write-doc README.md`" in written
    assert rows[0] in written and "2 questions." in written


def test_with_gold_ids_recall_is_scored_for_each_system(tmp_path):
    corpus, questions = tmp_path / "corpus.jsonl", tmp_path / "questions.jsonl"
    docs = [{"doc_id": f"p:{i}", "collection": "p", "source": "Le Journal", "date": "1887-01-0"
             f"{i + 1}", "text": f"M. Lejeune parle des {topic}."}
            for i, topic in enumerate(["sucres", "céréales", "douanes"])]
    corpus.write_text("\n".join(json.dumps(d, ensure_ascii=False) for d in docs))
    questions.write_text(json.dumps({"qid": "q1", "question": "Que dit M. Lejeune des céréales ?",
                                     "question_type": "t", "gold_ids": ["p:1"]}))
    out = io.StringIO()
    call_command("bench_engine", "--corpus", str(corpus), "--questions", str(questions),
                 stdout=out)
    bm25 = next(line for line in out.getvalue().splitlines() if "plain BM25" in line)
    assert bm25 == "| plain BM25 (same index) | – | 1.000 | 1.000 |"


def test_corpus_without_questions_is_refused():
    with pytest.raises(CommandError, match="go together"):
        call_command("bench_engine", "--corpus", "x.jsonl")
