"""Read and validate a questions JSONL file."""

from __future__ import annotations

import json
from pathlib import Path

from common.jsonl import json_objects
from measurement.evaluation.records import EvalQuestion

REQUIRED = {"qid": str, "question": str, "question_type": str, "gold_ids": list}


class QuestionsError(ValueError):
    """A questions file that cannot be evaluated; the message names the line."""


def load_questions(path: Path) -> list[EvalQuestion]:
    """Return the questions of a JSONL file, checking every line's shape."""
    if not path.exists():
        raise QuestionsError(f"{path}: no such file")
    questions: list[EvalQuestion] = []
    seen: set[str] = set()
    with path.open(encoding="utf-8") as handle:
        for number, item, problem in json_objects(handle):
            if item is None:
                raise QuestionsError(f"{path.name} line {number}: {problem}")
            for key, kind in REQUIRED.items():
                if not isinstance(item.get(key), kind):
                    raise QuestionsError(
                        f"{path.name} line {number}: field {key!r} missing or not {kind.__name__}"
                    )
            gold = item["gold_ids"]
            if not gold or not all(isinstance(g, str) and g for g in gold):
                raise QuestionsError(
                    f"{path.name} line {number}: gold_ids must be a non-empty list of strings"
                )
            if item["qid"] in seen:
                raise QuestionsError(f"{path.name} line {number}: duplicate qid {item['qid']!r}")
            seen.add(item["qid"])
            answer = item.get("answer")
            questions.append(EvalQuestion(
                qid=item["qid"], question=item["question"], question_type=item["question_type"],
                gold_keys=tuple(gold), line=number,
                reference_answer=answer if isinstance(answer, str) else ""))
    if not questions:
        raise QuestionsError(f"{path.name}: no questions")
    return questions


def check_gold_ids(questions: list[EvalQuestion], known: set[str], name: str) -> None:
    """Raise when a gold id is not a document of the archive, naming the first offending line."""
    for question in questions:
        missing = [g for g in question.gold_keys if g not in known]
        if missing:
            raise QuestionsError(
                f"{name} line {question.line}: unknown gold id(s) {', '.join(missing)} "
                f"(not in the archive; was the corpus ingested?)"
            )


def load_pool(path: Path) -> list[str]:
    """Return the document ids listed in a corpus JSONL file (its `doc_id` fields)."""
    ids = []
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if line.strip():
                try:
                    ids.append(json.loads(line)["doc_id"])
                except (json.JSONDecodeError, KeyError, TypeError) as exc:
                    raise QuestionsError(f"{path.name} line {number}: no doc_id ({exc})") from exc
    return ids
