"""Parse uploaded question files (JSONL or CSV) into validated rows."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from dataclasses import dataclass, field

from django.conf import settings

from agent.investigations.question_limits import question_problem
from common.jsonl import json_objects


class BatchFileError(ValueError):
    """The uploaded file cannot be read; the message names the line."""


@dataclass
class QuestionRow:
    question: str
    qid: str = ""
    question_type: str = ""
    gold_keys: list[str] = field(default_factory=list)


def parse_batch_file(name: str, raw: bytes) -> list[QuestionRow]:
    """Read every question or fail with the first bad line; nothing is created on failure."""
    if len(raw) > settings.TRACE_MAX_UPLOAD_BYTES:
        raise BatchFileError(
            f"The file is too large: {len(raw) / 1_000_000:.1f} MB, at most "
            f"{settings.TRACE_MAX_UPLOAD_BYTES / 1_000_000:.1f} MB."
        )
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise BatchFileError("The file is not UTF-8 text.") from None
    records = _csv_records(text) if name.lower().endswith(".csv") else _jsonl_records(text)
    rows: list[QuestionRow] = []
    limit = settings.TRACE_MAX_BATCH_QUESTIONS
    for number, record in records:
        if len(rows) == limit:
            raise BatchFileError(
                f"At most {limit} questions per batch (line {number} is one more).")
        rows.append(_row(record, number))
    if not rows:
        raise BatchFileError("The file holds no questions.")
    return rows


def _jsonl_records(text: str) -> Iterator[tuple[int, dict]]:
    # Lines end at "\n" only: a U+2028 inside a question is text, not a line break.
    for number, record, problem in json_objects(text.split("\n")):
        if record is None:
            raise BatchFileError(f"Line {number}: {problem}.")
        yield number, record


def _csv_records(text: str) -> Iterator[tuple[int, dict]]:
    # strict: an unterminated quote (which would swallow every following line into one
    # question) or text after a closing quote is an error, not a silently merged row.
    reader = csv.DictReader(io.StringIO(text, newline=""), strict=True)
    try:
        if not reader.fieldnames or "question" not in reader.fieldnames:
            raise BatchFileError("The CSV needs a 'question' column.")
        for record in reader:
            gold = record.get("gold_ids") or ""
            gold_keys = [g for g in gold.replace(";", ",").split(",") if g.strip()]
            yield reader.line_num, dict(record, gold_ids=gold_keys)
    except csv.Error as exc:
        raise BatchFileError(f"Line {reader.line_num + 1}: unreadable CSV ({exc}).") from None


def _row(record: dict, number: int) -> QuestionRow:
    question = record.get("question")
    if not isinstance(question, str) or not question.strip():
        raise BatchFileError(f"Line {number}: missing 'question' text.")
    gold = record.get("gold_ids") or []
    if not isinstance(gold, list) or not all(isinstance(g, str) for g in gold):
        raise BatchFileError(f"Line {number}: 'gold_ids' must be a list of document ids.")
    row = QuestionRow(
        question=question.strip(),
        qid=_scalar(record.get("qid")),
        question_type=_scalar(record.get("question_type")),
        gold_keys=[g.strip() for g in gold],
    )
    problem = question_problem(question=row.question, qid=row.qid,
                               question_type=row.question_type, gold_keys=row.gold_keys)
    if problem:
        raise BatchFileError(f"Line {number}: {problem}.")
    return row


def _scalar(value: object) -> str:
    return "" if value is None else str(value)
