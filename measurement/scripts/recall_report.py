"""Write the realistic-pool tables, the oracle curve and the miss attribution into the docs.

Reads the output directory of one `manage.py evaluate` run with several systems (one
sub-directory per system, each with its results.json) and rewrites the sections between
the generated blocks (`common/generated_docs.py`) in README.md and
docs/retrieval-evaluation.md, the plot docs/eval/historiqa-realistic/oracle_curve.png and the
summary next to it. Every figure comes from the results files; the command is written with it.

    python measurement/scripts/recall_report.py RUN_DIR [--lever "label=BEFORE_DIR,AFTER_DIR" ...]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shlex
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import django  # noqa: E402

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "trace_site.settings")
django.setup()

from common.generated_docs import write_generated_block  # noqa: E402
from measurement.evaluation.metrics import (  # noqa: E402
    MISS_CAUSES,
    HeadlineFigures,
    headline_figures,
    miss_causes,
    oracle_error_rate,
)
from measurement.evaluation.records import ResultRow  # noqa: E402
from measurement.plots import CurveSeries, draw_oracle_curve  # noqa: E402
from retrieval.selectors import genre_by_sub_corpus  # noqa: E402

GENRE = genre_by_sub_corpus()

OUT = ROOT / "docs" / "eval" / "historiqa-realistic"
TABLE_SYSTEMS = ("bm25", "dense", "hybrid", "hybrid-per-subcorpus", "offline")
ORACLES = (("oracle", 0.0), ("oracle-err05", 0.05), ("oracle-err10", 0.10),
           ("oracle-err20", 0.20), ("oracle-err30", 0.30))


def load(directory: Path) -> dict[str, dict]:
    """Return the results of every system in a run directory, by system name."""
    results = {}
    for path in sorted(directory.glob("*/results.json")):
        result = json.loads(path.read_text(encoding="utf-8"))
        results[result["system"]] = result
    if not results and (directory / "results.json").exists():
        result = json.loads((directory / "results.json").read_text(encoding="utf-8"))
        results[result["system"]] = result
    return results


def _f(value) -> str:
    return "—" if value is None else f"{value:.3f}"


def _rows(result: dict, qids: set[str] | None = None) -> list[ResultRow]:
    """Return one system's per-question rows, those of the questions `qids` (default: all)."""
    return [ResultRow.from_json(q) for q in result["per_question"]
            if qids is None or q["qid"] in qids]


def figures(result: dict, qids: set[str] | None = None) -> HeadlineFigures:
    """Return the headline figures of one system, over the questions `qids` (default: all)."""
    return headline_figures(_rows(result, qids), GENRE)


def system_table(results: dict[str, dict]) -> str:
    """Render the realistic-pool table of the plain systems and the offline engine."""
    lines = ["| system | questions | R@5 | R@10 | MRR | press gold R@10 | debate gold R@10 | "
             "comparative R@10 | P_acc | median s/question |", "|" + "---|" * 10]
    for name in TABLE_SYSTEMS:
        if name not in results:
            continue
        f = figures(results[name])
        seconds = f.engine_s if f.engine_s is not None else (f.latency_ms or 0) / 1000
        lines.append(f"| `{name}` | {f.n} | {_f(f.r5)} | {_f(f.r10)} | {_f(f.mrr)} | "
                     f"{_f(f.press)} | {_f(f.debates)} | {_f(f.comparative)} | "
                     f"{_f(f.p_acc)} | {seconds:.2f} |")
    return "\n".join(lines)


def curve_questions(results: dict[str, dict]) -> set[str]:
    """Return the questions every system of the curve (oracles and offline) was run on."""
    names = [name for name, _ in ORACLES if name in results] + ["offline"]
    sets = [{q["qid"] for q in results[n]["per_question"]} for n in names if n in results]
    return set.intersection(*sets) if sets else set()


def oracle_table(results: dict[str, dict]) -> str:
    """Render recall against judge error, with the offline policy beside it."""
    qids = curve_questions(results)
    lines = [f"Over the {len(qids)} questions every system of the curve was run on.", "",
             "| judge | set error | measured error | R@10 | press gold R@10 | debate gold R@10 | "
             "comparative R@10 | MRR | P_acc |", "|" + "---|" * 9]
    rows: list[tuple[str, float | None]] = [
        (name, rate) for name, rate in ORACLES if name in results]
    rows += [("offline", None)] if "offline" in results else []
    for name, rate in rows:
        rows_of = _rows(results[name], qids)
        f = headline_figures(rows_of, GENRE)
        measured = _f(oracle_error_rate(rows_of))
        set_rate = "—" if rate is None else f"{rate:.2f}"
        lines.append(f"| `{name}` | {set_rate} | {measured} | {_f(f.r10)} | {_f(f.press)} | "
                     f"{_f(f.debates)} | {_f(f.comparative)} | {_f(f.mrr)} | "
                     f"{_f(f.p_acc)} |")
    return "\n".join(lines)


def attribution(result: dict) -> tuple[int, dict[str, int]] | None:
    """Count the causes of the gold documents missing from an engine run's top 10.

    A document surfaced by a search with no verdict kept (a held chunk pushed out of a full
    held pool) counts as held; results written before that rule get it here.
    """
    rows = [q for q in result["per_question"] if "accepted_ids" in q.get("extras", {})]
    if not rows:
        return None
    totals = dict.fromkeys(MISS_CAUSES, 0)
    for row in rows:
        extras = row["extras"]
        accepted, rejected = set(extras["accepted_ids"]), set(extras["rejected_ids"])
        held = set(extras["held_ids"]) | (set(extras.get("surfaced_ids", ())) - accepted
                                          - rejected)
        counts = miss_causes(row["ranked_ids"], row["gold_ids"], accepted=accepted,
                             held=held, rejected=rejected - held, k=10)
        for cause, count in counts.items():
            totals[cause] += count
    return sum(totals.values()), totals


def attribution_table(results: dict[str, dict]) -> str:
    """Render where each engine system lost the gold documents missing from its top 10."""
    lines = ["| system | questions | gold missed at 10 | never retrieved | rejected | "
             "held, never promoted | accepted, ranked below 10 |", "|" + "---|" * 7]
    for name in ("offline", *(n for n, _ in ORACLES)):
        counted = attribution(results[name]) if name in results else None
        if counted is None:
            continue
        missed, totals = counted
        cells = " | ".join(f"{totals[c] / missed if missed else 0:.0%} ({totals[c]})"
                           for c in MISS_CAUSES)
        lines.append(f"| `{name}` | {len(results[name]['per_question'])} | {missed} | {cells} |")
    return "\n".join(lines)


def lever_table(levers: list[tuple[str, dict[str, dict], dict[str, dict]]]) -> str:
    """Render before/after per lever for every engine system both runs measured."""
    lines = ["| lever | system | questions | R@10 before → after | press gold | debate gold | "
             "comparative | MRR | P_acc |", "|" + "---|" * 9]
    for label, before, after in levers:
        for name in sorted(set(before) & set(after)):
            qids = ({q["qid"] for q in before[name]["per_question"]}
                    & {q["qid"] for q in after[name]["per_question"]})
            b, a = figures(before[name], qids), figures(after[name], qids)
            cells = " | ".join(f"{_f(getattr(b, k))} → {_f(getattr(a, k))}"
                               for k in ("r10", "press", "debates", "comparative", "mrr",
                                         "p_acc"))
            lines.append(f"| {label} | `{name}` | {len(qids)} | {cells} |")
    return "\n".join(lines)


def plot_curve(results: dict[str, dict], path: Path) -> None:
    """Plot R@10 (overall, press gold, debate gold, comparative) against the oracle's set error
    rate, the offline engine's levels dotted."""
    qids = curve_questions(results)
    points = [(rate, figures(results[name], qids)) for name, rate in ORACLES if name in results]
    if not points:
        return
    offline = figures(results["offline"], qids) if "offline" in results else None
    styles = (("r10", "overall"), ("press", "press gold"), ("debates", "debate gold"),
              ("comparative", "comparative"))
    series = [CurveSeries(label, [getattr(f, key) for _, f in points],
                          None if offline is None else getattr(offline, key))
              for key, label in styles]
    draw_oracle_curve(
        path, rates=[rate for rate, _ in points], series=series,
        xlabel="oracle judge error rate, set (%)",
        title=f"Recall@10 against judge error (realistic pool, {len(qids)} dev questions)")


def pool_line(results: dict[str, dict]) -> str:
    """Say which pool, questions and code revisions the runs measured."""
    any_result = next(iter(results.values()))
    pool = any_result.get("pool", {})
    revisions = sorted({r["git_revision"][:10] for r in results.values()})
    return (f"Questions of `{any_result['questions_file']}`; {pool.get('kind', '?')} pool of "
            f"{pool.get('documents', '?')} documents ({pool.get('gold_documents', '?')} of them "
            f"gold for these questions); code revision(s) {', '.join(revisions)}, corpus "
            f"revision {any_result['corpus_revision']}.")


def main(argv: list[str]) -> None:
    """Write the measured sections from one run (and optional lever comparisons)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", type=Path, nargs="+", help="evaluate output directories")
    parser.add_argument("--lever", action="append", default=[],
                        help='"label=BEFORE_DIR,AFTER_DIR"')
    args = parser.parse_args(argv)
    results: dict[str, dict] = {}
    for run in args.runs:
        results.update(load(run))
    if not results:
        raise SystemExit("no results.json under the given directories")
    levers = []
    for spec in args.lever:
        label, _, dirs = spec.partition("=")
        before, _, after = dirs.partition(",")
        levers.append((label, load(Path(before)), load(Path(after))))
    command = "python measurement/scripts/recall_report.py " + " ".join(
        shlex.quote(a if not Path(a.split("=")[-1].split(",")[0]).is_absolute() else "…")
        for a in argv)
    head = pool_line(results) + "\n\n"
    OUT.mkdir(parents=True, exist_ok=True)
    plot_curve(results, OUT / "oracle_curve.png")
    summary = {name: dataclasses.asdict(figures(result)) for name, result in results.items()}
    (OUT / "summary.json").write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    sections = {
        "realistic-table": head + system_table(results),
        "oracle-curve": head + oracle_table(results)
        + "\n\n![oracle curve](eval/historiqa-realistic/oracle_curve.png)",
        "miss-attribution": head + attribution_table(results),
    }
    if levers:
        sections["levers"] = head + lever_table(levers)
    doc = ROOT / "docs" / "retrieval-evaluation.md"
    for name, body in sections.items():
        write_generated_block(doc, name, body, command=command)
    write_generated_block(ROOT / "README.md", "realistic-table",
                          head + system_table(results), command=command)
    print(f"wrote {doc.relative_to(ROOT)}, README.md and {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main(sys.argv[1:])
