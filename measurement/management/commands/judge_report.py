"""Report the learnt judge against the rule judge on the same runs, per fold and pooled.

    manage.py evaluate --questions demo/historiqa/questions_dev.jsonl \
        --system offline-learnt-cv --system offline-rules --out eval-judge
    manage.py judge_report --results eval-judge --write-doc docs/judge.md

Reads the evaluation's per-question results, the folds `train_judge` used, and the oracle curve
(`docs/eval/historiqa-realistic/summary.json`); writes the table and a plot placing each judge's
measured error on the oracle curve.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from common.generated_docs import shown_path, write_generated_block
from measurement.evaluation.metrics import (
    MISS_CAUSES,
    HeadlineFigures,
    headline_figures,
    judge_error,
    median,
    miss_causes,
)
from measurement.evaluation.records import ResultRow
from measurement.plots import CurveSeries, JudgePoint, draw_oracle_curve
from retrieval.selectors import genre_by_sub_corpus

SYSTEMS = (("offline-learnt-cv", "learnt judge"), ("offline-rules", "rule judge"))
ORACLE_RATES = (("oracle", 0.0), ("oracle-err05", 0.05), ("oracle-err10", 0.10),
                ("oracle-err20", 0.20), ("oracle-err30", 0.30))


@dataclass(frozen=True)
class JudgeFigures:
    """One judge's figures over a group of questions (a fold, or all of them pooled): the
    evaluation's headline figures, the median sources accepted and the judge's measured error
    (`measurement/evaluation/metrics.py` computes each)."""

    headline: HeadlineFigures
    median_accepted: float
    error: float


def _figures(rows: list[ResultRow], genre_of: dict[str, str]) -> JudgeFigures:
    return JudgeFigures(
        headline=headline_figures(rows, genre_of),
        median_accepted=median([len(r.agent.accepted_keys) for r in rows if r.agent]),
        error=judge_error(rows),
    )


class Command(BaseCommand):
    help = "Compare the learnt and the rule judge per fold, and place them on the oracle curve."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--results", type=Path, required=True,
                            help="the --out directory of an evaluation of offline-learnt-cv "
                                 "and offline-rules")
        parser.add_argument("--folds", type=Path, default=None)
        parser.add_argument("--oracle-summary", type=Path,
                            default=Path("docs/eval/historiqa-realistic/summary.json"))
        parser.add_argument("--plot", type=Path, default=Path("docs/judge_oracle_curve.png"))
        parser.add_argument("--write-doc", type=Path, default=None)
        parser.add_argument("--doc-block", default="judge-report")

    def handle(self, *args: Any, **options: Any) -> None:
        folds_path = options["folds"] or settings.TRACE_DATA_DIR / "judge-training" / "folds.json"
        try:
            folds = json.loads(Path(folds_path).read_text(encoding="utf-8"))["folds"]
            results = {name: [ResultRow.from_json(row) for row in json.loads(
                (options["results"] / name / "results.json").read_text(encoding="utf-8")
            )["per_question"]] for name, _ in SYSTEMS}
        except (OSError, ValueError, KeyError) as exc:
            raise CommandError(f"cannot read the evaluation or the folds: {exc}") from None
        genre_of = genre_by_sub_corpus()
        lines = ["| judge | fold | questions | R@10 | press gold R@10 | debate gold R@10 | "
                 "comparative R@10 | MRR | P_acc | median accepted | measured error | "
                 "engine s (median) |",
                 "|---|---|---|---|---|---|---|---|---|---|---|---|"]
        pooled: dict[str, JudgeFigures] = {}
        for name, label in SYSTEMS:
            rows = results[name]
            groups = sorted({folds.get(row.qid, -1) for row in rows})
            for fold in groups:
                part = _figures([row for row in rows if folds.get(row.qid, -1) == fold],
                                genre_of)
                lines.append(self._line(label, str(fold + 1) if fold >= 0 else "none", part))
            pooled[name] = _figures(rows, genre_of)
            lines.append(self._line(label, "**pooled**", pooled[name]))
        learnt = results[SYSTEMS[0][0]]
        misses = self._misses(learnt)
        lines += ["", "Where the learnt judge's missed gold documents (not in the top 10) stopped: "
                  + ", ".join(f"{k.replace('_', ' ')} {v:.0%}" for k, v in misses.items()) + "."]
        self._plot(pooled, options["oracle_summary"], options["plot"])
        lines += ["", f"![the judges on the oracle curve]({options['plot'].name})"]
        body = "\n".join(lines)
        self.stdout.write(body)
        if options["write_doc"]:
            command = (f"manage.py judge_report --results {options['results'].name} "
                       f"--write-doc {shown_path(options['write_doc'], settings.BASE_DIR)}")
            write_generated_block(options["write_doc"], options["doc_block"], body,
                                  command=command)

    @staticmethod
    def _line(label: str, fold: str, figures: JudgeFigures) -> str:
        f = figures.headline
        return (f"| {label} | {fold} | {f.n:.0f} | {f.r10:.3f} | {_cell(f.press)} | "
                f"{_cell(f.debates)} | {_cell(f.comparative)} | {f.mrr:.3f} | "
                f"{_cell(f.p_acc)} | {figures.median_accepted:g} | "
                f"{100 * figures.error:.1f} % | {_cell(f.engine_s, '.2f')} |")

    @staticmethod
    def _misses(rows: list[ResultRow]) -> dict[str, float]:
        """The share of the gold documents missing from the top 10 per cause (`miss_causes`)."""
        totals = dict.fromkeys(MISS_CAUSES, 0)
        for row in rows:
            if row.agent is None:
                counts = miss_causes(row.ranked_keys, row.gold_keys, k=10)
            else:
                counts = miss_causes(row.ranked_keys, row.gold_keys,
                                     accepted=row.agent.accepted_keys,
                                     held=row.agent.held_keys,
                                     rejected=row.agent.rejected_keys, k=10)
            for cause, count in counts.items():
                totals[cause] += count
        total = sum(totals.values()) or 1
        return {cause.replace("_k", "_10"): count / total for cause, count in totals.items()}

    @staticmethod
    def _plot(pooled: dict[str, JudgeFigures], summary_path: Path, path: Path) -> None:
        rates: list[float] = []
        series: list[CurveSeries] = []
        if summary_path.exists():
            summary = json.loads(summary_path.read_text(encoding="utf-8"))
            measured = [(rate, summary[name]["r10"]) for name, rate in ORACLE_RATES
                        if name in summary]
            rates = [rate for rate, _ in measured]
            series = [CurveSeries("oracle judge (same searches)", [r10 for _, r10 in measured])]
        points = [JudgePoint(label, pooled[name].error, pooled[name].headline.r10, marker)
                  for (name, label), marker in zip(SYSTEMS, ("*", "s"), strict=True)]
        draw_oracle_curve(
            path, rates=rates, series=series, points=points, curve_prefix="",
            xlabel="judge error, measured (% of judged documents decided against gold)",
            title="The offline judges on the oracle curve (dev questions, realistic pool)")


def _cell(value: float | None, spec: str = ".3f") -> str:
    return "—" if value is None else format(value, spec)
