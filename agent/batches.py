"""Parse uploaded question files (JSONL or CSV) into validated rows."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field

from common.jsonl import json_objects

MAX_QUESTIONS = 2000


class BatchFileError(ValueError):
    """The uploaded file cannot be read; the message names the line."""


@dataclass
class QuestionRow:
    question: str
    qid: str = ""
    question_type: str = ""
    gold_ids: list[str] = field(default_factory=list)


def parse_batch_file(name: str, raw: bytes) -> list[QuestionRow]:
    """Read every question or fail with the first bad line; nothing is created on failure."""
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise BatchFileError("The file is not UTF-8 text.") from None
    rows = _parse_csv(text) if name.lower().endswith(".csv") else _parse_jsonl(text)
    if not rows:
        raise BatchFileError("The file holds no questions.")
    if len(rows) > MAX_QUESTIONS:
        raise BatchFileError(f"At most {MAX_QUESTIONS} questions per batch ({len(rows)} given).")
    return rows


def _parse_jsonl(text: str) -> list[QuestionRow]:
    rows = []
    for number, record, problem in json_objects(text.splitlines()):
        if record is None:
            raise BatchFileError(f"Line {number}: {problem}.")
        rows.append(_row(record, number))
    return rows


def _parse_csv(text: str) -> list[QuestionRow]:
    reader = csv.DictReader(io.StringIO(text))
    if not reader.fieldnames or "question" not in reader.fieldnames:
        raise BatchFileError("The CSV needs a 'question' column.")
    rows = []
    for number, record in enumerate(reader, start=2):
        gold = record.get("gold_ids") or ""
        record = dict(record, gold_ids=[g for g in gold.replace(";", ",").split(",") if g.strip()])
        rows.append(_row(record, number))
    return rows


def _row(record: dict, number: int) -> QuestionRow:
    question = record.get("question")
    if not isinstance(question, str) or not question.strip():
        raise BatchFileError(f"Line {number}: missing 'question' text.")
    gold = record.get("gold_ids") or []
    if not isinstance(gold, list) or not all(isinstance(g, str) for g in gold):
        raise BatchFileError(f"Line {number}: 'gold_ids' must be a list of document ids.")
    return QuestionRow(
        question=question.strip(),
        qid=str(record.get("qid") or ""),
        question_type=str(record.get("question_type") or ""),
        gold_ids=[g.strip() for g in gold],
    )
