"""Scores of one ranking against its gold documents: the one place each is computed.

The review page's comparisons, the batch page and every benchmark and evaluation read them here.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence


def recall_at_k(ranked: Sequence[str], gold: Iterable[str], k: int) -> float:
    """Return the share of gold documents inside the top k."""
    gold = set(gold)
    return len(gold & set(ranked[:k])) / len(gold) if gold else 0.0


def mrr_of_ranks(ranks: Iterable[int | None]) -> float:
    """Return the mean of 1/rank over gold documents' ranks (None, absent, counts 0)."""
    ranks = list(ranks)
    return sum(1.0 / rank for rank in ranks if rank) / len(ranks) if ranks else 0.0


def multi_gold_mrr(ranked: Sequence[str], gold: Iterable[str]) -> float:
    """Return the mean over gold documents of 1/rank (0 when a gold document is absent)."""
    positions = {doc: index for index, doc in reversed(list(enumerate(ranked, start=1)))}
    return mrr_of_ranks(positions.get(doc) for doc in dict.fromkeys(gold))


def all_gold_in_top(ranked: Sequence[str], gold: Iterable[str], k: int = 10) -> float:
    """Return 1.0 when every gold document is inside the top k, else 0.0."""
    gold = set(gold)
    return float(bool(gold) and gold <= set(ranked[:k]))
