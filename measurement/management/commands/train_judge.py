"""Train the learnt judge from the engine's own runs on questions with gold documents.

    manage.py train_judge --questions demo/historiqa/questions_dev.jsonl --write-doc docs/judge.md

Rows are collected once per archive revision in the work directory (resumable: a stopped run
goes on from the first question not collected); `--fresh` collects again, as needed whenever the
planner or the searches change.
"""

from __future__ import annotations

import datetime as dt
import json
import time
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.db import connection

from agent.engine.judge_features import FEATURES
from agent.investigations.retriever import ArchiveRetriever
from archive.models import CorpusRevision
from common.document_keys import document_key_sql
from common.generated_docs import shown_path, write_generated_block
from measurement.evaluation.metadata import git_revision
from measurement.evaluation.questions import QuestionsError, load_questions
from measurement.judge_training import (
    FOLDS,
    MEDIAN_ACCEPTED_MAX,
    ROUNDS,
    DocScores,
    Row,
    TrainingError,
    auc,
    choose_thresholds,
    collect_rows,
    feature_matrix,
    gold_group_folds,
    historian_simulation,
    question_digest,
    train_booster,
    write_model,
)


class Command(BaseCommand):
    help = "Train the learnt judge (LightGBM) from the engine's runs on questions with gold ids."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--questions", type=Path,
                            default=Path("demo/historiqa/questions_dev.jsonl"))
        parser.add_argument("--work-dir", type=Path, default=None,
                            help="rows and fold models (default: the data directory)")
        parser.add_argument("--model-dir", type=Path, default=None,
                            help="where the model goes (default: TRACE_JUDGE_MODEL_DIR)")
        parser.add_argument("--fresh", action="store_true", help="collect the rows again")
        parser.add_argument("--limit", type=int, default=0, help="first N questions only")
        parser.add_argument("--median-accepted", type=float, default=MEDIAN_ACCEPTED_MAX,
                            help="the accept threshold is the lowest keeping the median number "
                                 "of sources accepted per question at most this")
        parser.add_argument("--write-doc", type=Path, default=None)
        parser.add_argument("--doc-block", default="judge-training")

    def handle(self, *args: Any, **options: Any) -> None:
        started = time.perf_counter()
        try:
            questions = load_questions(options["questions"])
        except QuestionsError as exc:
            raise CommandError(str(exc)) from None
        if options["limit"]:
            questions = questions[: options["limit"]]
        archive_keys = _document_keys()
        gold_of = {q.qid: set(q.gold_keys) & archive_keys for q in questions}
        questions = [q for q in questions if gold_of[q.qid]]
        if not questions:
            raise CommandError("no question has a gold document in this archive: the judge "
                               "learns from questions whose gold ids the archive holds")
        revision = CorpusRevision.current()
        work = options["work_dir"] or settings.TRACE_DATA_DIR / "judge-training"
        rows_path = work / f"rows-corpus{revision}-features{len(FEATURES)}.jsonl"
        if options["fresh"] and rows_path.exists():
            rows_path.unlink()

        def progress(done: int, total: int) -> None:
            if done % 25 == 0 or done == total:
                self.stdout.write(f"collected {done}/{total} questions "
                                  f"({time.perf_counter() - started:.0f} s)")

        rows = collect_rows(questions, rows_path, retriever=ArchiveRetriever(), progress=progress)
        if sum(r.gold for r in rows) < 10:
            raise CommandError(f"{sum(r.gold for r in rows)} judged chunk(s) from gold "
                               "documents: too few to learn from")
        try:
            report = self._train(rows, questions, gold_of, work, options, revision, started)
        except TrainingError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(report)

    def _train(self, rows: list[Row], questions: list, gold_of: dict[str, set[str]],
               work: Path, options: dict, revision: int, started: float) -> str:
        folds = gold_group_folds(questions)
        if len(set(folds.values())) < FOLDS:
            raise TrainingError(f"these questions make fewer than {FOLDS} groups of questions "
                                "sharing no gold document: too few to validate on folds")
        oof = [0.0] * len(rows)
        fold_lines = []
        for fold in range(FOLDS):
            train = [r for r in rows if folds[r.qid] != fold]
            test = [i for i, r in enumerate(rows) if folds[r.qid] == fold]
            booster = train_booster(train)
            predicted = booster.predict(feature_matrix([rows[i] for i in test]))
            for i, p in zip(test, predicted, strict=True):
                oof[i] = float(p)
            self.stdout.write(f"fold {fold + 1}/{FOLDS} trained on {len(train)} rows")
            booster.save_model(str(work / f"fold-{fold}.txt"))
        thresholds, pooled = choose_thresholds(rows, oof, gold_of,
                                               median_accepted=options["median_accepted"])
        for fold in range(FOLDS):
            index = [i for i, r in enumerate(rows) if folds[r.qid] == fold]
            fold_rows = [rows[i] for i in index]
            docs = DocScores.of(fold_rows, [oof[i] for i in index])
            figures = docs.at(thresholds.accept, gold_of)
            fold_lines.append(
                f"| {fold + 1} | {len({r.qid for r in fold_rows})} | {len(fold_rows)} | "
                f"{auc([r.gold for r in fold_rows], [oof[i] for i in index]):.3f} | "
                f"{figures['precision']:.3f} | {figures['recall']:.3f} | "
                f"{figures['median_accepted']:g} |")
        (work / "folds.json").write_text(json.dumps({
            "folds": folds, "thresholds": {"accept": thresholds.accept, "hold": thresholds.hold,
                                           "screen": thresholds.screen}}), encoding="utf-8")
        final = train_booster(rows)
        command = (f"manage.py train_judge --questions "
                   f"{shown_path(options['questions'], settings.BASE_DIR)}"
                   + (f" --median-accepted {options['median_accepted']:g}"
                      if options["median_accepted"] != MEDIAN_ACCEPTED_MAX else ""))
        card = {
            "trained": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            "command": command,
            "data": {"questions_file": options["questions"].name, "questions": len(questions),
                     "rows": len(rows), "gold_rows": sum(r.gold for r in rows),
                     "corpus_revision": revision, "code_revision": git_revision()},
            "training": {"library": "lightgbm", "rounds": ROUNDS, "folds": FOLDS,
                         "folds_by": "connected gold groups"},
            "out_of_fold": {"auc": auc([r.gold for r in rows], oof), **pooled},
            "trained_on": sorted(question_digest(q.qid) for q in questions),
        }
        model_dir = options["model_dir"] or Path(settings.TRACE_JUDGE_MODEL_DIR)
        write_model(final, model_dir, thresholds=thresholds, card=card)
        screened_rows = sum(p < thresholds.screen for p in oof) / len(oof)
        best = DocScores.of(rows, oof).by_question
        gold_best = [p for docs in best.values() for p, gold in docs.values() if gold]
        screened_gold = sum(p < thresholds.screen for p in gold_best) / max(1, len(gold_best))
        simulation = historian_simulation(rows, oof, gold_of, folds, thresholds)
        errors = sum((p >= thresholds.accept) != r.gold for r, p in zip(rows, oof, strict=True))
        lines = [
            f"Rows: {len(rows)} judged chunks of {len(questions)} questions "
            f"({sum(r.gold for r in rows)} from gold documents, "
            f"{100 * sum(r.gold for r in rows) / len(rows):.1f} %); "
            f"{len(FEATURES)} features; LightGBM, {ROUNDS} trees; {FOLDS} folds by connected "
            f"gold groups; corpus revision {revision}, code {git_revision()[:10]}.",
            "",
            "Out-of-fold figures, documents scored by their best chunk, accepted at the "
            "threshold chosen on the folds:",
            "",
            "| fold | questions | rows | chunk AUC | P_acc | R_acc | median accepted |",
            "|---|---|---|---|---|---|---|",
            *fold_lines,
            f"| pooled | {len(questions)} | {len(rows)} | "
            f"{auc([r.gold for r in rows], oof):.3f} | {pooled['precision']:.3f} | "
            f"{pooled['recall']:.3f} | {pooled['median_accepted']:g} |",
            "",
            f"Thresholds: accept ≥ {thresholds.accept:.3f}, hold ≥ {thresholds.hold:.3f}, "
            f"screen below {thresholds.screen:.2g} (a model call is skipped: on the folds "
            f"{100 * screened_rows:.1f} % of the judged chunks would be screened out, and "
            f"{100 * screened_gold:.2f} % of the gold documents judged). "
            f"Chunk-level error at the accept threshold: {100 * errors / len(rows):.1f} %.",
            "",
            f"The judge learning from a historian, simulated: the top five sources (held or "
            f"accepted) of the questions of folds 1, 3 and 5 corrected from gold "
            f"({simulation['decisions']:.0f} decisions; the judge's log-odds shift by "
            f"{simulation['shift']:+.2f}); on the questions of folds 2 and 4, R@10 of the "
            f"accepted sources {simulation['r10_before']:.3f} → {simulation['r10_after']:.3f}, "
            f"P_acc {simulation['p_acc_before']:.3f} → {simulation['p_acc_after']:.3f}.",
            "",
            f"Model: `{shown_path(model_dir, settings.BASE_DIR)}`; "
            f"{time.perf_counter() - started:.0f} s in all.",
        ]
        report = "\n".join(lines)
        if options["write_doc"]:
            write_generated_block(options["write_doc"], options["doc_block"], report,
                                  command=f"{command} --write-doc {options['write_doc']}")
        return report


def _document_keys() -> set[str]:
    """Every document key the archive holds."""
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {document_key_sql()} FROM archive_document d "
                       "JOIN archive_subcorpus s ON s.id = d.sub_corpus_id")
        return {row[0] for row in cursor.fetchall()}

