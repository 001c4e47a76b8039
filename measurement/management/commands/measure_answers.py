"""Measure the cited answers of a batch against the reference answers of its questions file.

    manage.py measure_answers --batch 3 --questions demo/historiqa/questions_dev.jsonl \
        [--draft-missing] [--json out.json] [--write-doc README.md]

For the batch's finished investigations whose qid has a reference answer (the file's `answer`
column), it prints the share of answer sentences whose cited span holds a key entity of the
reference answer and the share of questions whose answer holds one at all, overall and per
question type (`measurement/evaluation/answers.py` says what a key entity is).
`--draft-missing` drafts the answer of an investigation that has none, with its policy's drafter.
`--write-doc FILE` writes the table, with the runs' policies, the drafters and the pool, into
the file's `cited-answers` block.
"""

from __future__ import annotations

import json
import shlex
from collections import defaultdict
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from agent.models import AnswerDraft, Batch, Investigation
from archive.models import Document
from common.generated_docs import (
    GeneratedBlockError,
    check_generated_block,
    shown_path,
    write_generated_block,
)
from measurement.evaluation.answers import AnswerReport, measure_batch
from measurement.evaluation.pool import describe_pool, pool_phrase
from measurement.evaluation.questions import QuestionsError, load_questions

BLOCK = "cited-answers"


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
        parser.add_argument("--write-doc", type=Path,
                            help=f"write the table into this document's {BLOCK} block")

    def handle(self, *args, **options) -> None:
        if options["write_doc"]:
            try:
                check_generated_block(options["write_doc"], BLOCK)
            except GeneratedBlockError as exc:
                raise CommandError(str(exc)) from None
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
        if options["write_doc"]:
            measured = [i for i in investigations if i.qid in {s.qid for s in report.scores}]
            body = _context(batch, measured, questions_gold={
                key for q in questions if q.qid in references for key in q.gold_keys})
            write_generated_block(options["write_doc"], BLOCK,
                                  body + "\n\n" + "\n".join(report_lines(report)),
                                  command=_command_line(options))


def _context(batch: Batch, measured: list[Investigation], questions_gold: set[str]) -> str:
    """Say what was measured: the batch, the runs' policies, the drafters, the pool."""
    policies = sorted({i.policy_label for i in measured})
    drafters = sorted({draft.get_drafter_display() for draft in AnswerDraft.objects.filter(
        investigation__in=measured).order_by("investigation_id", "-created_at", "-id")
        .distinct("investigation_id")})
    pool = describe_pool("the whole archive",
                         [d.key for d in Document.objects.select_related("sub_corpus")],
                         questions_gold)
    return (f"Batch “{batch.name}”: {len(measured)} finished investigations measured; "
            f"runs by {', '.join(policies) or 'no policy'}; answers by the "
            f"{', '.join(drafters) or 'no'} drafter; {pool_phrase(pool)}.")


def _command_line(options: dict) -> str:
    """Say how to measure this again (files by their place in the repository)."""
    words = ["manage.py", "measure_answers", "--batch", str(options["batch"])]
    for name in ("questions", "write_doc"):
        words += [f"--{name.replace('_', '-')}",
                  shown_path(options[name], Path(settings.BASE_DIR))]
    if options["draft_missing"]:
        words.append("--draft-missing")
    return shlex.join(words)


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
        lines.append("")  # a table ends at a blank line
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
