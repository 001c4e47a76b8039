"""Write results as JSON, Markdown tables and recall@k plots."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import matplotlib

from measurement.evaluation.metrics import oracle_error_rate
from measurement.evaluation.pool import pool_phrase
from measurement.evaluation.records import Metrics, RunContext, SystemResult
from measurement.plots import CurveSeries, draw_oracle_curve, save_figure

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

# The agent's figures shown under "Other figures", in this order (`AgentMetrics` attributes).
AGENT_KEYS = ("p_acc", "r_acc", "accepted_mean", "llm_calls_mean", "input_tokens_mean",
              "output_tokens_mean", "cost_mean", "engine_seconds_median",
              "model_wait_seconds_median", "quoted_words", "false_claims")


def _fmt(value) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)


def _pool_text(context: RunContext) -> str:
    """Say which pool a result ran on (a result without its pool's description has its label)."""
    return pool_phrase(context.pool) if context.pool else str(context.settings.get("pool"))


def _table(header: Sequence[str], rows: Sequence[Sequence]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_fmt(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def metric_columns(ks: Sequence[int]) -> list[str]:
    """Return the headline metric names in display order."""
    return [f"recall@{k}" for k in ks] + ["mrr", "all_gold@10"]


def metric_values(metrics: Metrics | None, ks: Sequence[int]) -> list[float | None]:
    """Return the headline metrics in `metric_columns` order (None: not measured)."""
    if metrics is None or not metrics.n:
        return [None] * (len(ks) + 2)
    return [*(metrics.recall.get(k) for k in ks), metrics.mrr, metrics.all_gold_at_10]


def _recall(metrics: Metrics | None, k: int) -> float | None:
    return None if metrics is None else metrics.recall.get(k)


def system_markdown(result: SystemResult) -> str:
    """Render one system's results as Markdown."""
    ks = result.ks
    cols = metric_columns(ks)
    overall = result.overall
    context = result.context
    parts = [f"# Evaluation: {result.system}", "",
             f"{result.n_questions} questions; pool: {_pool_text(context)}; "
             f"corpus revision {context.corpus_revision}; embedding model "
             f"{context.embedding_model}; code revision {context.git_revision}.", ""]
    rows = [["overall", overall.n, *metric_values(overall, ks)]]
    rows += [[t, m.n, *metric_values(m, ks)] for t, m in result.by_type.items()]
    parts += ["## By question type", "", _table(["type", "n", *cols], rows), ""]
    parts += ["## Recall@10 by gold sub-corpus and genre", "",
              _table(["gold sub-corpus", "gold docs", "recall@10"],
                     [[s, g.n_gold, g.recall] for s, g in result.by_gold_sub_corpus.items()]
                     + [[f"genre: {name}", g.n_gold, g.recall]
                        for name, g in result.by_gold_genre.items()]), ""]
    extra: list[tuple[str, object]] = []
    if overall.bm25_dense_jaccard_at_20 is not None:
        extra.append(("bm25_dense_jaccard@20", overall.bm25_dense_jaccard_at_20))
    if overall.fused_gold_at_20_single_channel_share is not None:
        extra.append(("fused_gold@20_single_channel_share",
                      overall.fused_gold_at_20_single_channel_share))
    if overall.n:
        extra += [("latency_median_ms", overall.latency_median_ms),
                  ("latency_p95_ms", overall.latency_p95_ms)]
    agent = overall.agent
    if agent is not None:
        extra += [(key, getattr(agent, key)) for key in AGENT_KEYS]
        extra += [(f"miss: {k}", v) for k, v in agent.miss_attribution.items()]
    parts += ["## Other figures", "", _table(["figure", "value"], extra), ""]
    usage = [(row.qid, row.agent) for row in result.questions
             if row.agent is not None and row.agent.llm_calls]
    if usage:
        parts += ["## Model use per question", "", _table(
            ["question", "model calls", "input tokens", "output tokens", "cost"],
            [[qid, agent.llm_calls, agent.usage.input_tokens, agent.usage.output_tokens,
              f"{agent.cost:.5f}"]
             for qid, agent in usage]), ""]
    return "\n".join(parts)


def summary_markdown(results: Sequence[SystemResult]) -> str:
    """Render the short table the README and docs carry.

    Overall figures, recall@10 by gold genre and by question type, and, when an agent system
    ran, the share of its accepted documents that are gold (P_acc).
    """
    genres = sorted({g for r in results for g in r.by_gold_genre})
    types = sorted({t for r in results for t in r.by_type})
    ks = [k for k in (5, 10) if k in results[0].overall.recall]
    agent = any(r.overall.agent is not None for r in results)
    header = ["system", *(f"R@{k}" for k in ks), "MRR",
              *(f"{g} gold R@10" for g in genres), *(f"{t} R@10" for t in types),
              *(["P_acc"] if agent else []), "latency median ms"]
    rows = [[f"`{r.system}`", *(r.overall.recall[k] for k in ks), r.overall.mrr,
             *(g.recall if (g := r.by_gold_genre.get(genre)) else None for genre in genres),
             *(_recall(r.by_type.get(t), 10) for t in types),
             *([r.overall.agent.p_acc if r.overall.agent else None] if agent else []),
             r.overall.latency_median_ms] for r in results]
    first = results[0].context
    intro = (f"{results[0].n_questions} questions of `{first.questions_file}`; "
             f"pool: {_pool_text(first)}.")
    return intro + "\n\n" + _table(header, rows)


def comparison_markdown(results: Sequence[SystemResult]) -> str:
    """Render several systems side by side: overall, per type and per gold sub-corpus."""
    ks = results[0].ks
    cols = metric_columns(ks)
    parts = ["# Comparison", "", f"{results[0].n_questions} questions; pool: "
             f"{_pool_text(results[0].context)}.", "", "## Overall", "",
             _table(["system", *cols, "latency median ms", "latency p95 ms"],
                    [[r.system, *metric_values(r.overall, ks),
                      r.overall.latency_median_ms, r.overall.latency_p95_ms]
                     for r in results]), ""]
    labels = sorted({s for r in results for s in r.by_gold_sub_corpus})
    genres = sorted({g for r in results for g in r.by_gold_genre})
    parts += ["## Recall@10 by gold sub-corpus", "",
              _table(["system", *labels, *(f"genre: {g}" for g in genres)],
                     [[r.system,
                       *(g.recall if (g := r.by_gold_sub_corpus.get(s)) else None
                         for s in labels),
                       *(g.recall if (g := r.by_gold_genre.get(genre)) else None
                         for genre in genres)]
                      for r in results]), ""]
    for qtype in sorted({t for r in results for t in r.by_type}):
        rows = [[r.system, *metric_values(r.by_type.get(qtype), ks)] for r in results]
        first = results[0].by_type.get(qtype)
        n = None if first is None else first.n
        parts += [f"## {qtype} ({n} questions)", "", _table(["system", *cols], rows), ""]
    return "\n".join(parts)


def plot_system(result: SystemResult, path: Path) -> None:
    """Plot recall@k curves overall and per question type for one system."""
    fig, ax = plt.subplots(figsize=(6, 4))
    _recall_at_k_lines(ax, result.ks, [("overall", result.overall), *result.by_type.items()],
                       f"{result.system}: recall@k")
    ax.set_ylabel("recall@k")
    ax.legend(fontsize=7, loc="lower right")
    save_figure(fig, path)


def plot_comparison(results: Sequence[SystemResult], path: Path) -> None:
    """Plot recall@k curves per system, overall and per question type."""
    types = ["overall", *sorted({t for r in results for t in r.by_type})]
    fig, axes = plt.subplots(1, len(types), figsize=(4.2 * len(types), 4), squeeze=False)
    for ax, qtype in zip(axes[0], types, strict=True):
        series = [(r.system, metrics) for r in results
                  if (metrics := r.overall if qtype == "overall" else r.by_type.get(qtype))]
        _recall_at_k_lines(ax, results[0].ks, series, qtype, fontsize=9)
    axes[0][0].set_ylabel("recall@k")
    axes[0][-1].legend(fontsize=7, loc="lower right")
    save_figure(fig, path)


def _recall_at_k_lines(ax, ks: Sequence[int], series: Sequence[tuple[str, Metrics]], title: str,
                       *, fontsize: float | None = None) -> None:
    """Draw one recall@k line per (label, metrics) on a 0..1 axis titled `title`."""
    for label, metrics in series:
        ax.plot(ks, [metrics.recall[k] for k in ks], marker="o", label=label)
    if fontsize is None:
        ax.set_title(title)
    else:
        ax.set_title(title, fontsize=fontsize)
    ax.set_xlabel("k")
    ax.set_ylim(0, 1)
    ax.grid(alpha=0.3)


def _headline_k(results: Sequence[SystemResult]) -> int:
    ks = results[0].ks
    return 10 if 10 in ks else max(ks)


def _grouped_bars(groups: Sequence[str], series: Sequence[tuple[str, list]], *, title: str,
                  xlabel: str, path: Path) -> None:
    """Horizontal bars: one group per row, one bar per series; a missing value draws nothing."""
    height = max(2.2, 0.9 + len(groups) * (0.25 + 0.22 * len(series)))
    fig, ax = plt.subplots(figsize=(7, height))
    bar = 0.8 / max(1, len(series))
    for i, (label, values) in enumerate(series):
        positions = [g + (i - (len(series) - 1) / 2) * bar for g in range(len(groups))]
        drawn = [(y, v) for y, v in zip(positions, values, strict=True) if v is not None]
        bars = ax.barh([y for y, _ in drawn], [v for _, v in drawn], height=bar * 0.9,
                       label=label)
        ax.bar_label(bars, fmt="%.2f", fontsize=7, padding=2)
    ax.set_yticks(range(len(groups)), groups, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlim(0, 1.08)
    ax.set_xlabel(xlabel)
    ax.set_title(title, fontsize=9)
    ax.grid(axis="x", alpha=0.3)
    if len(series) > 1:
        ax.legend(fontsize=7, loc="lower right")
    save_figure(fig, path)


def plot_recall_by_type(results: Sequence[SystemResult], path: Path) -> None:
    """Recall@10 (else the largest k) per question type, one bar per system."""
    k = _headline_k(results)
    types = sorted({t for r in results for t in r.by_type})
    counts = {t: next(r.by_type[t].n for r in results if t in r.by_type) for t in types}
    groups = ["overall", *(f"{t} ({counts[t]})" for t in types)]
    series = [(r.system, [_recall(r.overall, k), *(_recall(r.by_type.get(t), k) for t in types)])
              for r in results]
    _grouped_bars(groups, series, title=f"recall@{k} by question type (questions)",
                  xlabel=f"recall@{k}", path=path)


def plot_recall_by_sub_corpus(results: Sequence[SystemResult], path: Path) -> None:
    """Recall@10 of the gold documents of each sub-corpus, one bar per system."""
    labels = sorted({s for r in results for s in r.by_gold_sub_corpus})
    counts = {s: next(r.by_gold_sub_corpus[s].n_gold for r in results
                      if s in r.by_gold_sub_corpus) for s in labels}
    series = [(r.system, [g.recall if (g := r.by_gold_sub_corpus.get(s)) else None
                          for s in labels]) for r in results]
    _grouped_bars([f"{s} ({counts[s]})" for s in labels], series,
                  title="recall@10 by the gold documents' sub-corpus (gold documents)",
                  xlabel="recall@10", path=path)


def _recall_at_10(result: SystemResult, question_type: str) -> float | None:
    metrics = result.overall if question_type == "overall" else result.by_type.get(question_type)
    return _recall(metrics, 10)


def plot_oracle_curve(results: Sequence[SystemResult], path: Path) -> bool:
    """Plot recall@10 against the oracle judges' measured error rates (overall, per question
    type), the offline engine as dotted lines when it ran too. False (nothing written) with
    fewer than two oracle systems."""
    oracles = sorted(((rate, r) for r in results
                      if (rate := oracle_error_rate(r.questions)) is not None),
                     key=lambda p: p[0])
    if len(oracles) < 2:
        return False
    offline = next((r for r in results if r.system == "offline"), None)
    types = sorted({t for _, r in oracles for t in r.by_type})
    series = [CurveSeries(label, [_recall_at_10(r, label) for _, r in oracles],
                          None if offline is None else _recall_at_10(offline, label))
              for label in ["overall", *types]]
    draw_oracle_curve(
        path, rates=[rate for rate, _ in oracles], series=series,
        xlabel="oracle judge error rate, measured (% of its decisions flipped)",
        title=f"Recall@10 against judge error ({oracles[0][1].n_questions} questions)")
    return True


def write_system(result: SystemResult, directory: Path) -> None:
    """Write results.json, results.md and the plots (recall@k, by question type, by gold
    sub-corpus) into a directory."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "results.json").write_text(json.dumps(result.to_json(), ensure_ascii=False))
    (directory / "results.md").write_text(system_markdown(result))
    plot_system(result, directory / "recall_at_k.png")
    plot_recall_by_type([result], directory / "recall_by_type.png")
    plot_recall_by_sub_corpus([result], directory / "recall_by_sub_corpus.png")


def write_comparison(results: Sequence[SystemResult], directory: Path) -> None:
    """Write the combined table, JSON summary and plots for several systems (the oracle curve
    when two oracle systems or more ran: the error-rate sweep)."""
    directory.mkdir(parents=True, exist_ok=True)
    summary = [{k: data[k] for k in ("system", "n_questions", "overall", "by_type",
                                     "by_gold_sub_corpus", "by_gold_genre", "pool")}
               for data in (r.to_json() for r in results)]
    (directory / "comparison.json").write_text(json.dumps(summary, indent=1, ensure_ascii=False))
    (directory / "results.md").write_text(comparison_markdown(results))
    plot_comparison(results, directory / "recall_at_k.png")
    plot_recall_by_type(results, directory / "recall_by_type.png")
    plot_recall_by_sub_corpus(results, directory / "recall_by_sub_corpus.png")
    plot_oracle_curve(results, directory / "oracle_curve.png")
