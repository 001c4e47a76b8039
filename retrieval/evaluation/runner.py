"""Run systems over questions and aggregate the metrics."""

from __future__ import annotations

from collections.abc import Sequence

from tqdm import tqdm

from retrieval.evaluation.metrics import recall_by_group, summarize
from retrieval.evaluation.systems import EvalConfig, build_system

KEEP_RANKED = 20


def evaluate_system(
    name: str,
    questions: Sequence[dict],
    config: EvalConfig,
    *,
    ks: Sequence[int],
    sub_corpus_of: dict[str, str],
    genre_of: dict[str, str],
    progress: bool = True,
    keep_ranked: int = KEEP_RANKED,
) -> dict:
    """Run one system on every question and return the results document (without metadata)."""
    system = build_system(name, config)
    system(questions[0])  # warm-up: index build, model load and caches are not query latency
    rows = []
    for question in tqdm(questions, desc=name, unit="q", disable=not progress, leave=False):
        run = system(question)
        rows.append({
            "qid": question["qid"],
            "question_type": question["question_type"],
            "ranked_ids": list(run.ranked_ids),
            "gold_ids": list(question["gold_ids"]),
            "seconds": run.seconds,
            "extras": run.extras,
        })
    by_type = {
        qtype: summarize([r for r in rows if r["question_type"] == qtype], ks)
        for qtype in sorted({r["question_type"] for r in rows})
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


def _public_row(row: dict, keep_ranked: int) -> dict:
    extras = {k: v for k, v in row["extras"].items() if k != "channel_rankings"}
    out = {
        "qid": row["qid"],
        "question_type": row["question_type"],
        "ranked_ids": row["ranked_ids"][:keep_ranked],
        "gold_ids": row["gold_ids"],
        "gold_ranks": {g: (row["ranked_ids"].index(g) + 1 if g in row["ranked_ids"] else None)
                       for g in row["gold_ids"]},
        "seconds": round(row["seconds"], 5),
    }
    if extras:
        out["extras"] = extras
    return out
