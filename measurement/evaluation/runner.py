"""Run systems over questions and aggregate the metrics."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

from django.db import connections
from tqdm import tqdm

from measurement.evaluation.metrics import recall_by_group, summarize
from measurement.evaluation.records import EvalQuestion, ResultRow
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
    keep_ranked: int = KEEP_RANKED,
    workers: int = 1,
) -> dict:
    """Run one system on every question and return the results document (without metadata).

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
    return {
        "system": name,
        "n_questions": len(rows),
        "ks": list(ks),
        "overall": summarize(rows, ks),
        "by_type": by_type,
        "by_gold_sub_corpus": recall_by_group(rows, sub_corpus_of),
        "by_gold_genre": recall_by_group(rows, genre_of_doc),
        "per_question": [_public_row(r, keep_ranked) for r in rows],
    }


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


def _public_row(row: ResultRow, keep_ranked: int) -> dict:
    out = {
        "qid": row.qid,
        "question_type": row.question_type,
        "ranked_ids": row.ranked_keys[:keep_ranked],
        "gold_ids": row.gold_keys,
        "gold_ranks": {g: (row.ranked_keys.index(g) + 1 if g in row.ranked_keys else None)
                       for g in row.gold_keys},
        "seconds": round(row.seconds, 5),
    }
    if row.agent is not None:
        out["extras"] = row.agent.to_json()
    return out
