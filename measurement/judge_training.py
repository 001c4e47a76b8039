"""Train the learnt judge: rows from the engine's own runs, folds by gold groups, thresholds.

Rows are the chunks the offline engine judges (with the rules, so a fresh archive can train its
first model) on questions with gold documents; a row's label is whether its document is gold for
its question. Questions that share a gold document stay in one fold (connected gold groups), so
no fold learns a document it is measured on. Thresholds are chosen on the out-of-fold
probabilities, documents scored by their best chunk.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from agent.engine.config import EngineConfig
from agent.engine.investigation import run_investigation
from agent.engine.judge_adaptation import log_odds_shift
from agent.engine.judge_features import FEATURES, JudgedRow
from agent.engine.judge_model import (
    CARD_FILE,
    FORMAT,
    TREES_FILE,
    JudgeModel,
    Thresholds,
    load_trees,
)
from agent.engine.offline import OfflinePolicy
from agent.engine.sinks import ListSink
from agent.investigations.retriever import ArchiveRetriever
from measurement.evaluation.metrics import median
from measurement.evaluation.records import EvalQuestion

FOLDS = 5
PARAMS = {
    "objective": "binary", "learning_rate": 0.05, "num_leaves": 15, "min_data_in_leaf": 20,
    "feature_fraction": 0.8, "bagging_fraction": 0.8, "bagging_freq": 1, "lambda_l2": 1.0,
    "seed": 0, "deterministic": True, "force_row_wise": True, "verbose": -1, "num_threads": 2,
}  # fmt: skip
ROUNDS = 300
# What the accept threshold is chosen for: the most recall that keeps the sources a historian
# reviews per question within this bound (median); precision follows from it. At 6 the engine
# lost 0.03 of R@10 to the rules for +0.10 P_acc; at 8 it loses 0.02 for +0.06 (docs/judge.md).
MEDIAN_ACCEPTED_MAX = 8
HOLD_RECALL = 0.9  # accepted and held together keep this share of the judged gold documents
SCREEN_FALSE_REJECTS = 0.01  # a model call is skipped only below this share of gold


class TrainingError(RuntimeError):
    """Training cannot go on: the message says why (no gold, too few rows)."""


@dataclass(frozen=True)
class Row:
    """A judged chunk with its question, its label and (once trained) its out-of-fold score."""

    qid: str
    document_key: str
    features: tuple[float, ...]
    gold: bool


def collect_rows(questions: list[EvalQuestion], rows_path: Path, *,
                 retriever: ArchiveRetriever,
                 progress: Callable[[int, int], None] = lambda done, total: None) -> list[Row]:
    """Run the offline engine per question and keep every judged chunk; resumable by question.

    Each finished question's rows are appended to `rows_path` at once, so a run stopped half
    way keeps what it collected and the next one starts from the first question not done.
    """
    done = _read_rows(rows_path)
    seen = {row.qid for row in done}
    rows_path.parent.mkdir(parents=True, exist_ok=True)
    with rows_path.open("a", encoding="utf-8") as out:
        for index, question in enumerate(questions, start=1):
            if question.qid not in seen:
                judged: list[JudgedRow] = []
                run_investigation(question.question, policy=OfflinePolicy(judged=judged),
                                  retriever=retriever, sink=ListSink(), config=EngineConfig())
                gold = set(question.gold_keys)
                lines = [json.dumps({"qid": question.qid, "document_key": row.document_key,
                                     "features": [_json_float(v) for v in row.features],
                                     "gold": row.document_key in gold}) for row in judged]
                out.write("".join(line + "\n" for line in lines))
                out.flush()
            progress(index, len(questions))
    wanted = {q.qid for q in questions}
    return [row for row in _read_rows(rows_path) if row.qid in wanted]


def _json_float(value: float) -> float | None:
    return None if math.isnan(value) else value


def _read_rows(path: Path) -> list[Row]:
    if not path.exists():
        return []
    rows = []
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            try:
                item = json.loads(line)
            except ValueError:
                continue  # a line cut by a stop half way: its question is collected again
            rows.append(Row(item["qid"], item["document_key"],
                            tuple(math.nan if v is None else v for v in item["features"]),
                            bool(item["gold"])))
    return rows


def gold_group_folds(questions: list[EvalQuestion], folds: int = FOLDS) -> dict[str, int]:
    """Assign questions to folds so that questions sharing a gold document share a fold."""
    parent = {q.qid: q.qid for q in questions}

    def root(qid: str) -> str:
        while parent[qid] != qid:
            parent[qid] = parent[parent[qid]]
            qid = parent[qid]
        return qid

    first_with: dict[str, str] = {}
    for question in questions:
        for key in question.gold_keys:
            if key in first_with:
                parent[root(question.qid)] = root(first_with[key])
            else:
                first_with[key] = question.qid
    groups: dict[str, list[str]] = {}
    for question in questions:
        groups.setdefault(root(question.qid), []).append(question.qid)
    sizes = [0] * folds
    assignment: dict[str, int] = {}
    for members in sorted(groups.values(), key=lambda m: (-len(m), m[0])):
        fold = sizes.index(min(sizes))
        sizes[fold] += len(members)
        assignment.update(dict.fromkeys(members, fold))
    return assignment


def feature_matrix(rows: list[Row]) -> np.ndarray:
    """The rows' features as a float matrix (NaN where a measure is missing)."""
    return np.array([r.features for r in rows], dtype=float).reshape(len(rows), len(FEATURES))


def train_booster(rows: list[Row]) -> Any:
    """Grow the trees on these rows."""
    os.environ.setdefault("OMP_NUM_THREADS", "2")
    # deferred: importing lightgbm costs about 0.3 s (-X importtime), paid only by the commands
    # that train, never by the web server
    import lightgbm

    data = lightgbm.Dataset(feature_matrix(rows), label=np.array([int(r.gold) for r in rows]),
                            feature_name=list(FEATURES), free_raw_data=True)
    return lightgbm.train(PARAMS, data, num_boost_round=ROUNDS)


@dataclass(frozen=True)
class DocScores:
    """Per question, each judged document's best out-of-fold probability and its label."""

    by_question: dict[str, dict[str, tuple[float, bool]]]

    @classmethod
    def of(cls, rows: Iterable[Row], probabilities: Iterable[float]) -> DocScores:
        by_question: dict[str, dict[str, tuple[float, bool]]] = {}
        for row, p in zip(rows, probabilities, strict=True):
            docs = by_question.setdefault(row.qid, {})
            best = docs.get(row.document_key, (0.0, row.gold))[0]
            docs[row.document_key] = (max(best, p), row.gold)
        return cls(by_question)

    def at(self, threshold: float, gold_of: dict[str, set[str]]) -> dict[str, float]:
        """Precision, recall and median count of the documents at or above a threshold."""
        accepted = gold_hits = gold_total = 0
        counts = []
        for qid, docs in self.by_question.items():
            chosen = [gold for p, gold in docs.values() if p >= threshold]
            counts.append(len(chosen))
            accepted += len(chosen)
            gold_hits += sum(chosen)
            gold_total += len(gold_of.get(qid, ()))
        return {"threshold": threshold, "precision": gold_hits / accepted if accepted else 0.0,
                "recall": gold_hits / gold_total if gold_total else 0.0,
                "median_accepted": median(counts) if counts else 0.0}


def choose_thresholds(rows: list[Row], oof: list[float], gold_of: dict[str, set[str]], *,
                      median_accepted: float = MEDIAN_ACCEPTED_MAX
                      ) -> tuple[Thresholds, dict[str, float]]:
    """Pick accept, hold and screen probabilities on the out-of-fold scores."""
    docs = DocScores.of(rows, oof)
    grid = sorted({round(p, 3) for p in oof if p >= 0.005}) or [0.5]
    accept_at = None
    for threshold in grid:  # lowest first: the most recall within the bound
        figures = docs.at(threshold, gold_of)
        if figures["median_accepted"] <= median_accepted:
            accept_at = figures
            break
    if accept_at is None:
        accept_at = docs.at(grid[-1], gold_of)
    gold_best = sorted(p for q in docs.by_question.values() for p, gold in q.values() if gold)
    hold = gold_best[int(len(gold_best) * (1 - HOLD_RECALL))] if gold_best else 0.0
    screen = gold_best[int(len(gold_best) * SCREEN_FALSE_REJECTS)] if gold_best else 0.0
    thresholds = Thresholds(accept=accept_at["threshold"],
                            hold=min(hold, accept_at["threshold"]),
                            screen=min(screen, hold, accept_at["threshold"]))
    return thresholds, accept_at


def auc(labels: list[bool], scores: list[float]) -> float:
    """Area under the ROC curve (rank statistic), NaN without both classes."""
    ranked = sorted(zip(scores, labels, strict=True))
    positives = sum(labels)
    negatives = len(labels) - positives
    if not positives or not negatives:
        return math.nan
    rank_sum, position = 0.0, 0
    while position < len(ranked):
        end = position
        while end < len(ranked) and ranked[end][0] == ranked[position][0]:
            end += 1
        mean_rank = (position + 1 + end) / 2
        rank_sum += mean_rank * sum(1 for _, label in ranked[position:end] if label)
        position = end
    return (rank_sum - positives * (positives + 1) / 2) / (positives * negatives)


def write_model(booster: Any, directory: Path, *, thresholds: Thresholds,
                card: dict[str, Any]) -> None:
    """Write the trees (LightGBM text format) and the card beside them."""
    directory.mkdir(parents=True, exist_ok=True)
    booster.save_model(str(directory / TREES_FILE))
    full = {"format": FORMAT, "features": list(FEATURES),
            "thresholds": {"accept": thresholds.accept, "hold": thresholds.hold,
                           "screen": thresholds.screen}, **card}
    (directory / CARD_FILE).write_text(json.dumps(full, indent=2, ensure_ascii=False) + "\n",
                                       encoding="utf-8")


def question_digest(qid: str) -> str:
    """How a model's card lists the questions it was trained on (not their ids themselves)."""
    return hashlib.sha256(qid.encode("utf-8")).hexdigest()[:16]


def fold_models(work: Path) -> dict[str, Any]:
    """Per question, the model trained without its fold (for a cross-validated evaluation);
    empty when `train_judge` has not run here."""

    assignment_path = work / "folds.json"
    if not assignment_path.exists():
        return {}
    saved = json.loads(assignment_path.read_text(encoding="utf-8"))
    thresholds = Thresholds(**saved["thresholds"])
    by_fold = {fold: JudgeModel(load_trees(work / f"fold-{fold}.txt"), thresholds)
               for fold in set(saved["folds"].values())}
    return {qid: by_fold[fold] for qid, fold in saved["folds"].items()}


def _accepted_figures(docs: DocScores, qids: list[str], threshold: float,
                      gold_of: dict[str, set[str]]) -> tuple[float, float]:
    """R@10 of the documents accepted (best first) and P_acc, over these questions."""
    hits = gold_total = accepted = accepted_gold = 0
    for qid in qids:
        chosen = sorted(((p, gold) for p, gold in docs.by_question.get(qid, {}).values()
                         if p >= threshold), reverse=True)
        hits += sum(gold for _, gold in chosen[:10])
        gold_total += len(gold_of.get(qid, ()))
        accepted += len(chosen)
        accepted_gold += sum(gold for _, gold in chosen)
    return (hits / gold_total if gold_total else 0.0,
            accepted_gold / accepted if accepted else 0.0)


def historian_simulation(rows: list[Row], oof: list[float], gold_of: dict[str, set[str]],
                         folds: dict[str, int], thresholds: Thresholds) -> dict[str, float]:
    """A historian corrects the top five sources of half the questions (from gold); the judge
    adapts to those decisions; R@10 and P_acc on the other half, before and after.

    The halves follow the folds (folds 0, 2, 4 correct; 1, 3 are measured), so no measured
    question shares a gold document with a corrected one.
    """

    docs = DocScores.of(rows, oof)
    corrected = [qid for qid in docs.by_question if folds[qid] % 2 == 0]
    measured = [qid for qid in docs.by_question if folds[qid] % 2 == 1]
    examples = []
    for qid in corrected:
        top = sorted(docs.by_question[qid].values(), reverse=True)[:5]
        examples += [(p, 1.0 if gold else 0.0) for p, gold in top if p >= thresholds.hold]
    shift = log_odds_shift(examples)
    before = _accepted_figures(docs, measured, thresholds.accept, gold_of)
    after = _accepted_figures(docs, measured, thresholds.shifted(-shift).accept, gold_of)
    return {"decisions": len(examples), "shift": shift, "r10_before": before[0],
            "p_acc_before": before[1], "r10_after": after[0], "p_acc_after": after[1]}
