"""Retrieval metrics over ranked document ids (pure functions, no Django)."""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from common.document_keys import split_document_key
from common.ranking_metrics import all_gold_in_top, mrr_of_ranks, multi_gold_mrr, recall_at_k
from common.usage import TokenUsage
from measurement.evaluation.records import AgentMetrics, GroupRecall, Metrics, ResultRow

MISS_CAUSES = ("never_retrieved", "rejected", "held_never_promoted", "ranked_below_k")
COMPARATIVE = "MH - Comparative"  # the question type of the comparative questions


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
        mrr=sum(row_mrr(r) for r in rows) / n,
        all_gold_at_10=sum(all_gold_in_top(r.ranked_keys, r.gold_keys, 10) for r in rows) / n,
        latency_median_ms=1000 * median(seconds),
        latency_p95_ms=1000 * percentile(seconds, 95),
        bm25_dense_jaccard_at_20=jaccard_at_20,
        fused_gold_at_20_single_channel_share=single_channel_share,
        agent=_agent_figures(rows),
    )


def row_mrr(row: ResultRow) -> float:
    """Return one row's MRR: from its gold documents' ranks in the whole ranking when it carries
    them (a row read back from results.json, whose ranking is only the kept top), else from
    its ranking."""
    if row.gold_ranks is not None:
        return mrr_of_ranks(row.gold_ranks.get(doc) for doc in dict.fromkeys(row.gold_keys))
    return multi_gold_mrr(row.ranked_keys, row.gold_keys)


def oracle_error_rate(questions: Sequence[ResultRow]) -> float | None:
    """The share of its decisions an oracle system's judge flipped, measured; None otherwise."""
    figures = [row.agent for row in questions if row.agent is not None]
    decisions = sum(agent.oracle_decisions for agent in figures)
    if not decisions:
        return None
    return sum(agent.oracle_errors for agent in figures) / decisions


def judge_error(rows: Sequence[ResultRow]) -> float:
    """The share of the documents a judge decided on whose accept / not-accept disagrees with
    gold (0 when it judged none)."""
    wrong = judged = 0
    for row in rows:
        if row.agent is None:
            continue
        accepted = set(row.agent.accepted_keys)
        seen = accepted | set(row.agent.held_keys) | set(row.agent.rejected_keys)
        gold = set(row.gold_keys)
        wrong += len(accepted - gold) + len((seen - accepted) & gold)
        judged += len(seen)
    return wrong / judged if judged else 0.0


@dataclass(frozen=True)
class HeadlineFigures:
    """One system's headline figures over a set of questions, as the realistic-pool tables, the
    oracle curve and the judge report show them (None: nothing to measure there)."""

    n: int
    r5: float
    r10: float
    mrr: float
    press: float | None  # recall@10 of the press gold documents (pooled over documents)
    debates: float | None  # and of the debates' ones
    comparative: float | None  # recall@10 of the comparative questions
    p_acc: float | None  # the engine's acceptance precision (None: a system that only ranks)
    engine_s: float | None  # median engine seconds per question (idem)
    latency_ms: float  # median seconds per question, in ms


def headline_figures(rows: Sequence[ResultRow], genre_of: Mapping[str, str]) -> HeadlineFigures:
    """Return the headline figures of `rows` from `summarize` and `recall_by_group`; `genre_of`
    maps a sub-corpus to its genre (`retrieval.selectors.genre_by_sub_corpus`)."""
    overall = summarize(rows, (5, 10))
    if not overall.n:
        return HeadlineFigures(n=0, r5=0.0, r10=0.0, mrr=0.0, press=None, debates=None,
                               comparative=None, p_acc=None, engine_s=None, latency_ms=math.nan)
    group_of = {doc: genre_of.get(split_document_key(doc)[0], "unknown")
                for row in rows for doc in row.gold_keys}
    by_genre = recall_by_group(rows, group_of)
    comparative = summarize([row for row in rows if row.question_type == COMPARATIVE], (10,))
    return HeadlineFigures(
        n=overall.n, r5=overall.recall[5], r10=overall.recall[10], mrr=overall.mrr,
        press=by_genre["press"].recall if "press" in by_genre else None,
        debates=by_genre["debates"].recall if "debates" in by_genre else None,
        comparative=comparative.recall[10] if comparative.n else None,
        p_acc=overall.agent.p_acc if overall.agent else None,
        engine_s=overall.agent.engine_seconds_median if overall.agent else None,
        latency_ms=overall.latency_median_ms,
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
