"""Progress and retrieval metrics of a batch of investigations."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from agent.models import Batch, Investigation
from common.ranking_metrics import multi_gold_mrr, recall_at_k

CUTOFFS = (2, 5, 10, 20)


@dataclass
class BatchSummary:
    total: int
    finished: int
    done: bool
    by_status: dict[str, int]
    investigations: list[Investigation]
    evaluated: int = 0
    metrics: dict[str, float] = field(default_factory=dict)
    per_question: dict[int, QuestionScore] = field(default_factory=dict)


@dataclass(frozen=True)
class QuestionScore:
    """One question's result against its gold documents."""

    gold: int
    found: int  # gold documents anywhere in the ranked list
    recall_at_10: float
    multi_gold_mrr: float


def question_score(ranked_keys: list[str], gold_keys: list[str]) -> QuestionScore:
    """Score one ranking against the question's gold documents."""
    return QuestionScore(
        gold=len(set(gold_keys)), found=len(set(gold_keys) & set(ranked_keys)),
        recall_at_10=recall_at_k(ranked_keys, gold_keys, 10),
        multi_gold_mrr=multi_gold_mrr(ranked_keys, gold_keys))


def batch_summary(batch: Batch) -> BatchSummary:
    """Count statuses; with gold ids, average recall@k and multi-gold MRR over finished runs."""
    investigations = list(batch.investigations.order_by("id"))
    statuses = Counter(inv.status for inv in investigations)
    finished = [inv for inv in investigations if inv.status == Investigation.Status.FINISHED]
    scored = [inv for inv in finished if inv.gold_keys]
    metrics: dict[str, float] = {}
    if scored:
        for k in CUTOFFS:
            metrics[f"R@{k}"] = sum(
                recall_at_k(inv.ranked_keys, inv.gold_keys, k) for inv in scored
            ) / len(scored)
        metrics["multi-gold MRR"] = sum(
            multi_gold_mrr(inv.ranked_keys, inv.gold_keys) for inv in scored
        ) / len(scored)
    per_question = {inv.pk: question_score(inv.ranked_keys, inv.gold_keys) for inv in scored}
    return BatchSummary(
        total=len(investigations),
        finished=len(finished),
        done=not any(inv.is_active for inv in investigations),
        by_status=dict(sorted(statuses.items())),
        investigations=investigations,
        evaluated=len(scored),
        metrics=metrics,
        per_question=per_question,
    )
