"""The one plotter of the oracle curve (recall@10 against the judge's error rate), and the one
way the evaluation's figures are saved.

`measurement/evaluation/report.py` (the oracle systems of one evaluation, against their measured
error rates), `measurement/scripts/recall_report.py` (the realistic pool's curve in the docs) and
`manage.py judge_report` (the offline judges placed on that curve) all draw it here, so the three
figures share their axes, scale and legend.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after the backend is chosen)
from matplotlib.figure import Figure  # noqa: E402

Y_LABEL = "recall@10"


@dataclass(frozen=True)
class CurveSeries:
    """One line of the curve: recall@10 at each error rate (None: not measured there), and the
    level of a reference system drawn as a dotted line of the same colour (None: not drawn)."""

    label: str
    values: Sequence[float | None]
    reference: float | None = None


@dataclass(frozen=True)
class JudgePoint:
    """A judge placed on the curve: its measured error (a share, 0..1) and its recall@10."""

    label: str
    error: float
    recall: float
    marker: str = "*"


def draw_oracle_curve(path: Path, *, rates: Sequence[float], series: Sequence[CurveSeries],
                      xlabel: str, title: str, curve_prefix: str = "oracle: ",
                      reference_label: str = "offline", points: Sequence[JudgePoint] = ()
                      ) -> None:
    """Draw recall@10 against the judge's error rate (`rates` are shares, shown in %) into
    `path`: one line per series, its reference level dotted, the judges' points on top."""
    fig, ax = plt.subplots(figsize=(6.5, 4))
    percents = [100 * rate for rate in rates]
    for i, line in enumerate(series):
        color = f"C{i % 10}"
        ax.plot(percents, [math.nan if v is None else v for v in line.values], marker="o",
                color=color, label=f"{curve_prefix}{line.label}")
        if line.reference is not None:
            ax.axhline(line.reference, color=color, linestyle=":", linewidth=1,
                       label=f"{reference_label}: {line.label}")
    for point in points:
        ax.plot([100 * point.error], [point.recall], marker=point.marker, markersize=11,
                linestyle="none", label=f"{point.label}: {100 * point.error:.1f} % error, "
                                        f"R@10 {point.recall:.3f}")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(Y_LABEL)
    ax.set_ylim(0, 1)
    ax.grid(alpha=0.3)
    entries = len(ax.get_legend_handles_labels()[1])
    ax.legend(fontsize=6 if entries > 4 else 7, loc="lower left", ncol=2 if entries > 4 else 1)
    ax.set_title(title, fontsize=9)
    save_figure(fig, path)


def save_figure(fig: Figure, path: Path) -> None:
    """Lay out, write as a PNG (its folder made if missing) and release a figure."""
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=90)
    plt.close(fig)
