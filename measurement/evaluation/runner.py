"""Run systems over questions and aggregate the metrics."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

from django.db import connections
from tqdm import tqdm

from measurement.evaluation.metrics import recall_by_group, summarize
from measurement.evaluation.records import EvalQuestion, ResultRow, RunContext, SystemResult
from measurement.evaluation.systems import EvalConfig, System, build_system

KEEP_RANKED = 20


def evaluate_system(
    name: str,
    questions: Sequence[EvalQuestion],
    config: EvalConfig,
    *,
    ks: Sequence[int],
    sub_corpus_of: dict[str, str],
    genre_of: dict[str, str],
    progress: bool = True,
    context: RunContext,
    keep_ranked: int = KEEP_RANKED,
    workers: int = 1,
) -> SystemResult:
    """Run one system on every question and return its results, measured in `context`.

    With `workers` > 1 questions run in that many threads: a system that waits on a remote model
    spends its time waiting, so concurrent questions cut the wall time (rows keep question order).
    """
    system = build_system(name, config)
    system(questions[0])  # warm-up: index build, model load and caches are not query latency
    bar = tqdm(total=len(questions), desc=name, unit="q", disable=not progress, leave=False)

    def run_one(question: EvalQuestion) -> ResultRow:
        row = _row(question, system)
        bar.update()
        return row

    if workers > 1:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            rows = list(pool.map(_closing_connections(run_one), questions))
    else:
        rows = [run_one(question) for question in questions]
    bar.close()
    by_type = {
        qtype: summarize([r for r in rows if r.question_type == qtype], ks)
        for qtype in sorted({r.question_type for r in rows})
    }
    genre_of_doc = {doc: genre_of.get(slug, "unknown") for doc, slug in sub_corpus_of.items()}
    return SystemResult(
        system=name,
        ks=tuple(ks),
        overall=summarize(rows, ks),
        by_type=by_type,
        by_gold_sub_corpus=recall_by_group(rows, sub_corpus_of),
        by_gold_genre=recall_by_group(rows, genre_of_doc),
        questions=rows,
        context=context,
        keep_ranked=keep_ranked,
    )


def _row(question: EvalQuestion, system: System) -> ResultRow:
    run = system(question)
    return ResultRow(qid=question.qid, question_type=question.question_type,
                     ranked_keys=list(run.ranked_keys), gold_keys=list(question.gold_keys),
                     seconds=run.seconds, channel_rankings=run.channel_rankings, agent=run.agent)


def _closing_connections(
    function: Callable[[EvalQuestion], ResultRow],
) -> Callable[[EvalQuestion], ResultRow]:
    """Wrap a per-question call so a worker thread never leaves a database connection open."""
    def wrapped(question: EvalQuestion) -> ResultRow:
        try:
            return function(question)
        finally:
            connections.close_all()

    return wrapped

