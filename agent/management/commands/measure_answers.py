"""Measure the cited answers of a batch against the reference answers of its questions file.

    manage.py measure_answers --batch 3 --questions demo/historiqa/questions_dev.jsonl \
        [--draft-missing] [--json out.json]

For the batch's finished investigations whose qid has a reference answer (the file's `answer`
column), it prints the share of answer sentences whose cited span holds a key entity of the
reference answer and the share of questions whose answer holds one at all, overall and per
question type (`agent/answer_evaluation.py` says what a key entity is). `--draft-missing` drafts
the answer of an investigation that has none, with its policy's drafter.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from agent.answer_evaluation import AnswerReport, measure_batch
from agent.models import Batch
from retrieval.evaluation.questions import QuestionsError, load_questions


class Command(BaseCommand):
    help = ("Share of cited-answer sentences whose cited span holds a key entity of the "
            "reference answer, and of questions whose answer holds one, for a batch.")

    def add_arguments(self, parser) -> None:
        parser.add_argument("--batch", type=int, required=True, help="the batch's id")
        parser.add_argument("--questions", type=Path, required=True,
                            help="the batch's questions file (JSONL with an `answer` column)")
        parser.add_argument("--draft-missing", action="store_true",
                            help="draft the answer of a finished investigation that has none")
        parser.add_argument("--json", type=Path, help="also write the figures to this file")

    def handle(self, *args, **options) -> None:
        try:
            batch = Batch.objects.get(pk=options["batch"])
        except Batch.DoesNotExist:
            raise CommandError(f"No batch {options['batch']}.") from None
        try:
            questions = load_questions(options["questions"])
        except QuestionsError as exc:
            raise CommandError(str(exc)) from exc
        references = {q.qid: (q.question_type, q.reference_answer)
                      for q in questions if q.reference_answer.strip()}
        if not references:
            raise CommandError(f"{options['questions']}: no question has a reference answer.")
        investigations = list(batch.investigations.order_by("id"))
        report = measure_batch(investigations, references,
                               draft_missing=options["draft_missing"])
        for line in report_lines(report):
            self.stdout.write(line)
        if options["json"]:
            options["json"].write_text(json.dumps(report_json(report), ensure_ascii=False,
                                                  indent=2), encoding="utf-8")


def _groups(report: AnswerReport) -> dict[str, AnswerReport]:
    groups: dict[str, AnswerReport] = defaultdict(AnswerReport)
    for score in report.scores:
        groups[score.question_type or "(no type)"].scores.append(score)
    return dict(sorted(groups.items()))


def report_lines(report: AnswerReport) -> list[str]:
    """Return the figures as a Markdown table, overall then per question type."""
    lines = ["| questions | answered | sentences | sentences whose cited span holds a key entity "
             "| questions whose answer holds one |", "|---|---|---|---|---|"]
    for name, group in [("all", report), *_groups(report).items()]:
        answered = sum(score.drafted and score.sentences > 0 for score in group.scores)
        lines.append(f"| {name}: {len(group.scores)} | {answered} | {group.sentences} | "
                     f"{group.sentence_share:.3f} | {group.question_share:.3f} |")
    if report.skipped:
        lines.append(f"Left out: {len(report.skipped)} ({'; '.join(report.skipped[:5])}"
                     f"{' …' if len(report.skipped) > 5 else ''}).")
    return lines


def report_json(report: AnswerReport) -> dict:
    """Return the figures and every question's score as JSON-ready data."""
    return {
        "questions": len(report.scores), "sentences": report.sentences,
        "sentence_share": report.sentence_share, "question_share": report.question_share,
        "skipped": report.skipped,
        "scores": [{"qid": s.qid, "question_type": s.question_type, "entities": s.entities,
                    "drafted": s.drafted, "sentences": s.sentences,
                    "sentences_holding": s.sentences_holding} for s in report.scores],
    }
