"""Checks of a question's fields, shared by every way an investigation is created.

The Ask form, batch files and the service layer all refuse the same things with the same words.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.conf import settings

from common.user_text import text_problem

# Lengths of the investigation fields a user supplies (agent.models.Investigation).
QID_MAX_CHARS = 200
QUESTION_TYPE_MAX_CHARS = 100
GOLD_ID_MAX_CHARS = 400
GOLD_IDS_MAX = 200
# A historian's note or the reason given for an override (the review page's form says as much).
NOTE_MAX_CHARS = 2000


def question_problem(
    *, question: str, qid: str = "", question_type: str = "", gold_keys: Iterable[str] = ()
) -> str:
    """Say what is wrong with the fields of a question ("" when nothing is)."""
    gold_keys = list(gold_keys)
    checks = [
        text_problem(question, label="the question", max_chars=settings.TRACE_MAX_QUESTION_CHARS),
        text_problem(qid, label="the qid", max_chars=QID_MAX_CHARS),
        text_problem(question_type, label="the question_type", max_chars=QUESTION_TYPE_MAX_CHARS),
        *(text_problem(g, label="a gold id", max_chars=GOLD_ID_MAX_CHARS) for g in gold_keys),
    ]
    if len(gold_keys) > GOLD_IDS_MAX:
        checks.append(f"{len(gold_keys)} gold ids; at most {GOLD_IDS_MAX}")
    return next((c for c in checks if c), "")
