"""Retrieval metrics over ranked document ids (pure functions, no Django)."""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Mapping, Sequence

from common.ranking_metrics import all_gold_in_top, multi_gold_mrr, recall_at_k
from common.usage import TokenUsage
from measurement.evaluation.records import AgentMetrics, GroupRecall, Metrics, ResultRow

MISS_CAUSES = ("never_retrieved", "rejected", "held_never_promoted", "ranked_below_k")


def jaccard(a: Iterable[str], b: Iterable[str]) -> float:
    """Return |A ∩ B| / |A ∪ B| (1.0 for two empty sets)."""
    a, b = set(a), set(b)
    return len(a & b) / len(a | b) if a | b else 1.0


def percentile(values: Sequence[float], q: float) -> float:
    """Return the q-th percentile (0..100) with linear interpolation."""
    if not values:
        return math.nan
    ordered = sorted(values)
    position = (len(ordered) - 1) * q / 100
    low, high = math.floor(position), math.ceil(position)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def median(values: Sequence[float]) -> float:
    """Return the median, NaN when empty."""
    return statistics.median(values) if values else math.nan


def single_channel_gold(
    fused: Sequence[str], gold: Iterable[str], channels: Mapping[str, Sequence[str]], k: int = 20
) -> tuple[int, int]:
    """Return (gold docs in the fused top k, of which found by exactly one channel's top k)."""
    hits = set(gold) & set(fused[:k])
    tops = [set(ranking[:k]) for ranking in channels.values()]
    single = sum(1 for doc in hits if sum(doc in top for top in tops) == 1)
    return len(hits), single


def acceptance(accepted: Iterable[str], gold: Iterable[str]) -> tuple[float, float]:
    """Return (P_acc, R_acc) = (|A∩G|/|A|, |A∩G|/|G|), 0 for an empty denominator."""
    accepted, gold = set(accepted), set(gold)
    both = len(accepted & gold)
    return (both / len(accepted) if accepted else 0.0, both / len(gold) if gold else 0.0)


def miss_causes(
    ranked: Sequence[str],
    gold: Iterable[str],
    *,
    accepted: Iterable[str] = (),
    held: Iterable[str] = (),
    rejected: Iterable[str] = (),
    k: int = 10,
) -> dict[str, int]:
    """Count why each gold document missing from the top k was missed."""
    accepted, held, rejected = set(accepted), set(held), set(rejected)
    counts = dict.fromkeys(MISS_CAUSES, 0)
    for doc in set(gold) - set(ranked[:k]):
        if doc in accepted:
            counts["ranked_below_k"] += 1
        elif doc in held:
            counts["held_never_promoted"] += 1
        elif doc in rejected:
            counts["rejected"] += 1
        else:
            counts["never_retrieved"] += 1
    return counts


def summarize(rows: Sequence[ResultRow], ks: Sequence[int]) -> Metrics:
    """Aggregate per-question rows into metrics."""
    n = len(rows)
    if n == 0:
        return Metrics(n=0)
    seconds = [r.seconds for r in rows]
    jaccard_at_20, single_channel_share = _channel_figures(rows)
    return Metrics(
        n=n,
        recall={k: sum(recall_at_k(r.ranked_keys, r.gold_keys, k) for r in rows) / n
                for k in ks},
        mrr=sum(multi_gold_mrr(r.ranked_keys, r.gold_keys) for r in rows) / n,
        all_gold_at_10=sum(all_gold_in_top(r.ranked_keys, r.gold_keys, 10) for r in rows) / n,
        latency_median_ms=1000 * median(seconds),
        latency_p95_ms=1000 * percentile(seconds, 95),
        bm25_dense_jaccard_at_20=jaccard_at_20,
        fused_gold_at_20_single_channel_share=single_channel_share,
        agent=_agent_figures(rows),
    )


def _channel_figures(rows: Sequence[ResultRow]) -> tuple[float | None, float | None]:
    """Return (BM25/dense Jaccard@20, share of fused gold@20 found by one channel only)."""
    with_channels = [r for r in rows if len(r.channel_rankings) >= 2]
    if not with_channels:
        return None, None
    overlaps, fused_gold, single = [], 0, 0
    for row in with_channels:
        channels = row.channel_rankings
        if "bm25" in channels and "dense" in channels:
            overlaps.append(jaccard(channels["bm25"][:20], channels["dense"][:20]))
        found, alone = single_channel_gold(row.ranked_keys, row.gold_keys, channels, 20)
        fused_gold += found
        single += alone
    return (sum(overlaps) / len(overlaps) if overlaps else None,
            single / fused_gold if fused_gold else 0.0)


def _agent_figures(rows: Sequence[ResultRow]) -> AgentMetrics | None:
    agent_rows = [(r, r.agent) for r in rows if r.agent is not None]
    if not agent_rows:
        return None
    n = len(agent_rows)
    pairs = [acceptance(agent.accepted_keys, r.gold_keys) for r, agent in agent_rows]
    usage = TokenUsage.total(agent.usage for _, agent in agent_rows)
    totals = dict.fromkeys(MISS_CAUSES, 0)
    for r, agent in agent_rows:
        counts = miss_causes(
            r.ranked_keys, r.gold_keys, accepted=agent.accepted_keys, held=agent.held_keys,
            rejected=agent.rejected_keys, k=10,
        )
        for cause, count in counts.items():
            totals[cause] += count
    missed = sum(totals.values())
    return AgentMetrics(
        p_acc=sum(p for p, _ in pairs) / n,
        r_acc=sum(r for _, r in pairs) / n,
        accepted_mean=sum(len(agent.accepted_keys) for _, agent in agent_rows) / n,
        llm_calls_mean=sum(agent.llm_calls for _, agent in agent_rows) / n,
        input_tokens_mean=usage.input_tokens / n,
        output_tokens_mean=usage.output_tokens / n,
        cost_mean=sum(agent.cost for _, agent in agent_rows) / n,
        # Words the rationales quote, and those their passage does not print (must stay 0).
        quoted_words=sum(agent.quoted_words for _, agent in agent_rows),
        false_claims=sum(len(agent.false_claims) for _, agent in agent_rows),
        engine_seconds_median=median([agent.engine_seconds for _, agent in agent_rows]),
        model_wait_seconds_median=median([agent.model_wait_seconds for _, agent in agent_rows]),
        missed_gold_at_10=missed,
        miss_attribution={c: (totals[c] / missed if missed else 0.0) for c in MISS_CAUSES},
    )


def recall_by_group(
    rows: Sequence[ResultRow], group_of: Mapping[str, str], k: int = 10
) -> dict[str, GroupRecall]:
    """Return recall@k of gold documents grouped by a label of each gold document."""
    found: dict[str, int] = {}
    total: dict[str, int] = {}
    for row in rows:
        top = set(row.ranked_keys[:k])
        for doc in set(row.gold_keys):
            label = group_of.get(doc, "unknown")
            total[label] = total.get(label, 0) + 1
            found[label] = found.get(label, 0) + (doc in top)
    return {label: GroupRecall(k=k, recall=found[label] / total[label], n_gold=total[label])
            for label in sorted(total)}
