"""The evaluate command on a tiny archive: outputs, and clear failures on bad input."""

import dataclasses
import json

import pytest
from django.core.management import CommandError, call_command

from common.usage import TokenUsage
from measurement.evaluation import systems
from measurement.evaluation.questions import load_questions
from measurement.evaluation.records import AgentFigures, EvalQuestion
from measurement.evaluation.systems import EvalConfig, SystemRun, build_system, register_system
from tests.retrieval.conftest import (  # noqa: F401 - the indexes isolated as for retrieval
    _isolated_bm25,
    axis_vector,
    bump_revision,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def tiny(archive, day, tmp_path):
    archive.document("gaulois", ["Le général Boulanger à Longchamp."], external_id="g1",
                     date=day(7, 14), vectors=[axis_vector(1)])
    archive.document("intran", ["Boulanger acclamé par la foule."], external_id="i1",
                     date=day(7, 15), vectors=[axis_vector(1, 1)])
    archive.document("debats", ["M.Floquet a la parole sur le budget."], external_id="d1",
                     date=day(7, 16), vectors=[axis_vector(0, 1)])
    archive.sub_corpora["debats"].genre = "debates"
    archive.sub_corpora["debats"].save()
    bump_revision()
    questions = tmp_path / "q.jsonl"
    lines = [
        {"qid": "q1", "question": "Boulanger à Longchamp le 14 juillet 1887 axis0",
         "question_type": "MH - Comparative", "gold_ids": ["gaulois:g1", "intran:i1"]},
        {"qid": "q2", "question": "Floquet budget axis1", "question_type": "MH - Generic",
         "gold_ids": ["intran:i1", "debats:d1"]},
    ]
    questions.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    return questions


def test_evaluate_writes_results_json_markdown_and_plots(tiny, tmp_path):
    out = tmp_path / "out"
    call_command("evaluate", "--questions", str(tiny), "--system", "bm25", "--out", str(out),
                 "--no-progress")
    result = json.loads((out / "results.json").read_text())
    for key in ("system", "n_questions", "overall", "by_type", "by_gold_sub_corpus",
                "per_question", "git_revision", "corpus_revision", "embedding_model", "settings"):
        assert key in result
    for key in ("recall@2", "recall@5", "recall@10", "recall@20", "mrr", "all_gold@10",
                "latency_median_ms", "latency_p95_ms"):
        assert key in result["overall"]
    assert set(result["by_type"]) == {"MH - Comparative", "MH - Generic"}
    assert set(result["by_gold_sub_corpus"]) == {"gaulois", "intran", "debats"}
    assert set(result["by_gold_genre"]) == {"press", "debates"}
    assert result["per_question"][0]["qid"] == "q1"
    assert result["overall"]["recall@10"] == 0.75  # q1: 2 of 2; q2: 1 of 2 (i1 lacks the words)
    assert (out / "results.md").read_text().startswith("# Evaluation: bm25")
    assert (out / "recall_at_k.png").stat().st_size > 1000


def test_evaluate_several_systems_writes_subdirectories_and_a_comparison(tiny, tmp_path):
    out = tmp_path / "cmp"
    call_command("evaluate", "--questions", str(tiny), "--system", "hybrid", "--system",
                 "hybrid-per-subcorpus", "--system", "hybrid+temporal", "--out", str(out),
                 "--no-progress", "--k", "1,2")
    assert (out / "hybrid" / "results.json").exists()
    assert (out / "hybrid-per-subcorpus" / "results.md").exists()
    assert (out / "hybrid_temporal" / "recall_at_k.png").exists()
    hybrid = json.loads((out / "hybrid" / "results.json").read_text())
    assert "bm25_dense_jaccard@20" in hybrid["overall"]
    assert "recall@1" in hybrid["overall"] and "recall@10" in hybrid["overall"]
    assert "## Recall@10 by gold sub-corpus" in (out / "results.md").read_text()
    assert (out / "recall_at_k.png").exists()


def test_malformed_questions_file_fails_naming_the_line(tiny, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(tiny.read_text() + "{not json\n")
    with pytest.raises(CommandError, match="bad.jsonl line 3"):
        call_command("evaluate", "--questions", str(bad), "--system", "bm25",
                     "--out", str(tmp_path / "o"))
    missing_field = tmp_path / "missing.jsonl"
    missing_field.write_text(json.dumps({"qid": "x", "question": "y", "gold_ids": ["a"]}) + "\n")
    with pytest.raises(CommandError, match="line 1: field 'question_type'"):
        call_command("evaluate", "--questions", str(missing_field), "--system", "bm25",
                     "--out", str(tmp_path / "o"))


def test_unknown_gold_id_fails_with_a_clear_message(tiny, tmp_path):
    bad = tmp_path / "unknown.jsonl"
    bad.write_text(json.dumps({"qid": "x", "question": "y", "question_type": "t",
                               "gold_ids": ["gaulois:nope"]}) + "\n")
    with pytest.raises(CommandError, match="unknown.jsonl line 1: unknown gold id.*gaulois:nope"):
        call_command("evaluate", "--questions", str(bad), "--system", "bm25",
                     "--out", str(tmp_path / "o"))


def test_command_exits_non_zero_from_the_command_line(tiny, tmp_path):
    import subprocess
    import sys

    from django.conf import settings

    bad = tmp_path / "bad.jsonl"
    bad.write_text("[]\n")
    proc = subprocess.run(
        [sys.executable, "manage.py", "evaluate", "--questions", str(bad), "--system", "bm25",
         "--out", str(tmp_path / "o")],
        cwd=settings.BASE_DIR, capture_output=True, text=True,
    )
    assert proc.returncode != 0
    assert "bad.jsonl line 1: expected a JSON object" in proc.stderr


def test_registered_systems_report_agent_fields(tiny, tmp_path, monkeypatch):
    # The test's system leaves the registry with the test (other tests walk every system).
    monkeypatch.setattr(systems, "_registry", dict(systems._registry))

    def factory(config: EvalConfig):
        def run(question):
            return SystemRun(["intran:i1"], 0.01, agent=AgentFigures(
                accepted_keys=("intran:i1",), held_keys=question.gold_keys[:1],
                rejected_keys=(), surfaced_keys=("intran:i1",), llm_calls=3,
                usage=TokenUsage(10, 5), engine_seconds=0.1,
                model_wait_seconds=0.2))
        return run

    register_system("scripted-agent", factory)
    assert build_system("scripted-agent", EvalConfig())(
        EvalQuestion(qid="q", question="", question_type="", gold_keys=("a",))).ranked_keys
    out = tmp_path / "agent"
    call_command("evaluate", "--questions", str(tiny), "--system", "scripted-agent",
                 "--out", str(out), "--no-progress")
    overall = json.loads((out / "results.json").read_text())["overall"]
    assert overall["llm_calls_mean"] == 3 and overall["p_acc"] == 1.0
    assert set(overall["miss_attribution"]) == {"never_retrieved", "rejected",
                                                "held_never_promoted", "ranked_below_k"}
    assert "miss: held_never_promoted" in (out / "results.md").read_text()


def test_pool_option_restricts_candidates_to_a_corpus_file(tiny, tmp_path):
    pool = tmp_path / "pool.jsonl"
    pool.write_text(json.dumps({"doc_id": "gaulois:g1"}) + "\n"
                    + json.dumps({"doc_id": "intran:i1"}) + "\n")
    out = tmp_path / "pooled"
    call_command("evaluate", "--questions", str(tiny), "--system", "bm25-per-subcorpus",
                 "--out", str(out), "--pool", str(pool), "--no-progress")
    result = json.loads((out / "results.json").read_text())
    ranked = {d for q in result["per_question"] for d in q["ranked_ids"]}
    assert ranked <= {"gaulois:g1", "intran:i1"}
    assert "2 documents of pool.jsonl" in result["settings"]["pool"]


@pytest.mark.django_db(transaction=True)
def test_concurrent_workers_give_the_same_rows_in_question_order(tiny, tmp_path):
    from measurement.evaluation.records import RunContext
    from measurement.evaluation.runner import evaluate_system

    questions = [dataclasses.replace(question, qid=f"q{i}")
                 for i, question in enumerate(load_questions(tiny) * 3)]
    context = RunContext(git_revision="", corpus_revision=0, embedding_model="",
                         questions_file=tiny.name, question_selection={}, pool={}, settings={})
    kwargs = {"ks": [2, 10], "sub_corpus_of": {}, "genre_of": {}, "progress": False,
              "context": context}
    one = evaluate_system("hybrid-per-subcorpus", questions, EvalConfig(), **kwargs)
    many = evaluate_system("hybrid-per-subcorpus", questions, EvalConfig(), workers=4, **kwargs)
    assert [q.qid for q in many.questions] == [q.qid for q in questions]
    assert [q.ranked_keys for q in many.questions] == [q.ranked_keys for q in one.questions]


def test_results_say_which_pool_they_ran_on(tiny, tmp_path):
    out = tmp_path / "whole"
    call_command("evaluate", "--questions", str(tiny), "--system", "bm25", "--out", str(out),
                 "--no-progress")
    pool = json.loads((out / "results.json").read_text())["pool"]
    assert pool == {"label": "whole archive", "documents": 3, "gold_documents": 3,
                    "gold_share": 1.0, "kind": "gold-only"}
    assert "gold-only pool, 3 documents" in (out / "results.md").read_text()


def test_a_pool_mostly_of_documents_no_question_asks_about_is_realistic():
    from measurement.evaluation.pool import describe_pool

    pool = describe_pool("whole archive", [f"d:{i}" for i in range(100)], ["d:1", "d:2", "x:9"])
    assert (pool["documents"], pool["gold_documents"], pool["kind"]) == (100, 2, "realistic")
    assert describe_pool("p", ["d:1", "d:2", "d:3"], ["d:1"])["kind"] == "gold-only"


def test_every_kth_question_is_a_sample_recorded_with_the_results(tiny, tmp_path):
    out = tmp_path / "sample"
    call_command("evaluate", "--questions", str(tiny), "--system", "bm25", "--out", str(out),
                 "--every", "2", "--no-progress")
    result = json.loads((out / "results.json").read_text())
    assert [q["qid"] for q in result["per_question"]] == ["q1"]
    assert result["question_selection"] == {"every": 2, "limit": None}
    with pytest.raises(CommandError, match="--every"):
        call_command("evaluate", "--questions", str(tiny), "--system", "bm25", "--out",
                     str(out), "--every", "0", "--no-progress")


def test_evaluate_writes_its_summary_into_a_document_block(tiny, tmp_path):
    doc = tmp_path / "README.md"
    doc.write_text("Prose.\n<!-- BEGIN generated: eval-dev -->\nold\n"
                   "<!-- END generated: eval-dev -->\nMore prose.\n")
    call_command("evaluate", "--questions", str(tiny), "--system", "bm25", "--system", "hybrid",
                 "--out", str(tmp_path / "out"), "--no-progress", "--write-doc", str(doc),
                 "--doc-block", "eval-dev")
    text = doc.read_text()
    comparison = json.loads((tmp_path / "out" / "comparison.json").read_text())
    assert text.startswith("Prose.\n") and text.endswith("More prose.\n") and "\nold\n" not in text
    assert ("manage.py evaluate --questions q.jsonl --system bm25 --system hybrid --k 2,5,10,20 "
            "--out out --write-doc README.md --doc-block eval-dev`") in text
    assert "| system | R@5 | R@10 | MRR | debates gold R@10 | press gold R@10 |" in text
    assert "; pool: gold-only pool, 3 documents (whole archive; 3 of them gold" in text
    bm25 = next(r for r in comparison if r["system"] == "bm25")
    assert f"| `bm25` | {bm25['overall']['recall@5']:.3f} |" in text


def test_the_summary_block_gives_recall_by_question_type_and_the_agents_p_acc():
    from measurement.evaluation.records import (
        AgentMetrics,
        GroupRecall,
        Metrics,
        RunContext,
        SystemResult,
    )
    from measurement.evaluation.report import summary_markdown

    context = RunContext(git_revision="abc", corpus_revision=1, embedding_model="m",
                         questions_file="q.jsonl", question_selection={}, pool={},
                         settings={"pool": None})

    def result(system, p_acc, comparative):
        agent = None if p_acc is None else AgentMetrics(
            p_acc=p_acc, r_acc=0.0, accepted_mean=0.0, llm_calls_mean=0.0, input_tokens_mean=0.0,
            output_tokens_mean=0.0, cost_mean=0.0, quoted_words=0, false_claims=0,
            engine_seconds_median=0.0, model_wait_seconds_median=0.0, missed_gold_at_10=0,
            miss_attribution={})
        return SystemResult(
            system=system, ks=(5, 10), questions=[], context=context,
            overall=Metrics(n=2, recall={5: 0.5, 10: 0.75}, mrr=0.4, latency_median_ms=3.0,
                            agent=agent),
            by_gold_sub_corpus={}, by_gold_genre={"press": GroupRecall(10, 0.5, 1)},
            by_type={"MH - Comparative": Metrics(n=1, recall={10: comparative}),
                     "MH - Generic": Metrics(n=1, recall={10: 1.0})})

    text = summary_markdown([result("bm25", None, 0.25), result("offline", 0.125, 0.5)])
    assert ("| system | R@5 | R@10 | MRR | press gold R@10 | MH - Comparative R@10 | "
            "MH - Generic R@10 | P_acc | latency median ms |") in text
    assert "| `bm25` | 0.500 | 0.750 | 0.400 | 0.500 | 0.250 | 1.000 | — | 3.000 |" in text
    assert "| `offline` | 0.500 | 0.750 | 0.400 | 0.500 | 0.500 | 1.000 | 0.125 | 3.000 |" in text
    assert "P_acc" not in summary_markdown([result("bm25", None, 0.25)])


def test_evaluate_refuses_a_document_without_the_block(tiny, tmp_path):
    doc = tmp_path / "README.md"
    doc.write_text("No block here.\n")
    with pytest.raises(CommandError, match="exactly one"):
        call_command("evaluate", "--questions", str(tiny), "--system", "bm25", "--out",
                     str(tmp_path / "out"), "--no-progress", "--write-doc", str(doc))
    assert doc.read_text() == "No block here.\n"


def test_the_plots_by_question_type_and_sub_corpus_and_the_oracle_curve(tiny, tmp_path):
    from PIL import Image

    from measurement.evaluation.records import ResultRow
    from measurement.evaluation.report import oracle_error_rate

    single = tmp_path / "single"
    call_command("evaluate", "--questions", str(tiny), "--system", "bm25", "--out",
                 str(single), "--no-progress")
    for name in ("recall_by_type.png", "recall_by_sub_corpus.png"):
        assert Image.open(single / name).format == "PNG"
    assert not (single / "oracle_curve.png").exists()
    sweep = tmp_path / "sweep"
    call_command("evaluate", "--questions", str(tiny), "--system", "oracle", "--system",
                 "oracle-err30", "--system", "offline", "--out", str(sweep), "--no-progress")
    results = {name: [ResultRow.from_json(row) for row in json.loads(
        (sweep / name / "results.json").read_text())["per_question"]]
               for name in ("oracle", "oracle-err30", "offline")}
    rows = json.loads((sweep / "oracle-err30" / "results.json").read_text())["per_question"]
    decisions = sum(row["extras"]["oracle_decisions"] for row in rows)
    assert decisions > 0 and oracle_error_rate(results["oracle-err30"]) == (
        sum(row["extras"]["oracle_errors"] for row in rows) / decisions)
    assert oracle_error_rate(results["oracle"]) == 0.0
    assert oracle_error_rate(results["offline"]) is None
    for name in ("recall_at_k.png", "recall_by_type.png", "recall_by_sub_corpus.png",
                 "oracle_curve.png"):
        assert Image.open(sweep / name).format == "PNG", name
    for name in ("recall_by_type.png", "recall_by_sub_corpus.png"):
        assert (sweep / "oracle" / name).exists()
    assert not (sweep / "oracle" / "oracle_curve.png").exists()
