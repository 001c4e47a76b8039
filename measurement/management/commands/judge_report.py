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
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after the backend is chosen)
from django.conf import settings  # noqa: E402
from django.core.management.base import BaseCommand, CommandError  # noqa: E402

from common.document_keys import split_document_key  # noqa: E402
from common.generated_docs import shown_path, write_generated_block  # noqa: E402
from common.ranking_metrics import multi_gold_mrr, recall_at_k  # noqa: E402
from measurement.evaluation.metrics import acceptance  # noqa: E402
from measurement.evaluation.records import AgentFigures, ResultRow  # noqa: E402
from retrieval.selectors import genre_by_sub_corpus  # noqa: E402

SYSTEMS = (("offline-learnt-cv", "learnt judge"), ("offline-rules", "rule judge"))
ORACLE_RATES = (("oracle", 0.0), ("oracle-err05", 0.05), ("oracle-err10", 0.10),
                ("oracle-err20", 0.20), ("oracle-err30", 0.30))


def _agent(row: ResultRow) -> AgentFigures:
    """The row's judged documents (none for a row without the agent's figures)."""
    return row.agent or AgentFigures()


@dataclass(frozen=True)
class JudgeFigures:
    """One judge's figures over a group of questions (a fold, or all of them pooled)."""

    n: int
    r10: float
    press: float  # recall@10 of the press gold documents
    debates: float  # and of the debates' ones
    comparative: float  # recall@10 of the comparative questions
    mrr: float
    p_acc: float
    median_accepted: float
    error: float  # the judge's measured error
    engine_seconds: float  # median


def _figures(rows: list[ResultRow], genre_of: dict[str, str]) -> JudgeFigures:
    """The evaluation's own figures (means over questions, from `measurement/evaluation/metrics`)
    per group of questions, with the median sources accepted and the judge's measured error:
    the share of documents it judged whose accept / not-accept disagrees with gold."""
    def mean(values: list[float]) -> float:
        return statistics.mean(values) if values else 0.0

    def gold_recall(genre_wanted: bool | None) -> float:
        values = []
        for row in rows:
            gold = [k for k in row.gold_keys if genre_wanted is None or (
                genre_of.get(split_document_key(k)[0]) == "debates") == genre_wanted]
            if gold:
                values.append(recall_at_k(row.ranked_keys, gold, 10))
        return mean(values)

    wrong = judged = 0
    for row in rows:
        agent = _agent(row)
        accepted = set(agent.accepted_keys)
        seen = accepted | set(agent.held_keys) | set(agent.rejected_keys)
        gold = set(row.gold_keys)
        wrong += len(accepted - gold) + len((seen - accepted) & gold)
        judged += len(seen)
    comparative = [row for row in rows if row.question_type.endswith("Comparative")]
    return JudgeFigures(
        n=len(rows),
        r10=mean([recall_at_k(r.ranked_keys, r.gold_keys, 10) for r in rows]),
        press=gold_recall(False), debates=gold_recall(True),
        comparative=mean([recall_at_k(r.ranked_keys, r.gold_keys, 10) for r in comparative]),
        mrr=mean([multi_gold_mrr(r.ranked_keys, r.gold_keys) for r in rows]),
        p_acc=mean([acceptance(_agent(r).accepted_keys, r.gold_keys)[0] for r in rows]),
        median_accepted=statistics.median(
            [len(_agent(r).accepted_keys) for r in rows]) if rows else 0.0,
        error=wrong / judged if judged else 0.0,
        engine_seconds=statistics.median(
            [_agent(r).engine_seconds for r in rows]) if rows else 0.0,
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
    def _line(label: str, fold: str, f: JudgeFigures) -> str:
        return (f"| {label} | {fold} | {f.n:.0f} | {f.r10:.3f} | {f.press:.3f} | "
                f"{f.debates:.3f} | {f.comparative:.3f} | {f.mrr:.3f} | "
                f"{f.p_acc:.3f} | {f.median_accepted:g} | {100 * f.error:.1f} % | "
                f"{f.engine_seconds:.2f} |")

    @staticmethod
    def _misses(rows: list[ResultRow]) -> dict[str, float]:
        causes = {"rejected": 0, "held_never_promoted": 0, "never_judged": 0,
                  "ranked_below_10": 0}
        for row in rows:
            agent = _agent(row)
            accepted, held = set(agent.accepted_keys), set(agent.held_keys)
            rejected = set(agent.rejected_keys)
            for key in set(row.gold_keys) - set(row.ranked_keys[:10]):
                cause = ("ranked_below_10" if key in accepted else "held_never_promoted"
                         if key in held else "rejected" if key in rejected else "never_judged")
                causes[cause] += 1
        total = sum(causes.values()) or 1
        return {k: v / total for k, v in causes.items()}

    @staticmethod
    def _plot(pooled: dict[str, JudgeFigures], summary_path: Path, path: Path) -> None:
        fig, ax = plt.subplots(figsize=(6.5, 4))
        if summary_path.exists():
            summary = json.loads(summary_path.read_text(encoding="utf-8"))
            points = [(100 * rate, summary[name]["r10"]) for name, rate in ORACLE_RATES
                      if name in summary]
            ax.plot([p[0] for p in points], [p[1] for p in points], marker="o", color="C0",
                    label="oracle judge (same searches)")
        for (name, label), marker in zip(SYSTEMS, ("*", "s"), strict=True):
            f = pooled[name]
            ax.plot([100 * f.error], [f.r10], marker=marker, markersize=11,
                    linestyle="none", label=f"{label}: {100 * f.error:.1f} % error, "
                                            f"R@10 {f.r10:.3f}")
        ax.set_xlabel("judge error, measured (% of judged documents decided against gold)")
        ax.set_ylabel("recall@10")
        ax.set_ylim(0, 1)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="lower left")
        ax.set_title("The offline judges on the oracle curve (dev questions, realistic pool)",
                     fontsize=9)
        fig.tight_layout()
        path.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(path, dpi=90)
        plt.close(fig)
