"""Words the investigation pages show: why a loop stopped, why a chunk is held, what a step does,
and dates as the corpus language prints them. The live story and the template filters share them."""

from __future__ import annotations

import datetime as dt

from django.utils import dateformat

from common.french_dates import format_french_date

FINISH_REASONS = {
    "finish_action": "the agent finished",
    "budget": "the step budget ran out",
    "max_raw_steps": "too many steps without progress",
    "parse_failures": "too many unusable replies in a row",
    "repeated_search": "the same search was asked twice in a row",
    "cancelled": "cancelled",
}
HOLD_REASONS = {
    "widened_window": "dated just outside the dates this search asked for; "
                      "found only when the window was widened",
    "missing_verdict": "the review gave it no verdict",
    "unreviewed": "not reviewed before the sub-question ended",
}
# What a `FeedbackGiven` event means, for the historian (the message itself is the agent's).
FEEDBACK_REASONS = {
    "empty_result": "the search found nothing it had not read already",
    "duplicate_query": "it asked again for a search it had already run",
    "repeated_search": "it asked again for a search it had already run",
    "invalid_action": "it asked for a step that could not be carried out",
    "alternation_violation": "it asked for a step out of turn (search, then read what was found)",
    "parse_failure": "a reply of the model could not be read",
    "query_truncated": "its search was too long and only its beginning was searched",
    "review_incomplete": "its reading left some passages without a verdict",
}
STEP_ACTIONS = {"search": "searches", "review": "reviews the passages", "finish": "finishes"}


def format_date(date: dt.date | None, precision: str = "day", language: str = "fr") -> str:
    """Format a date the way the corpus language prints it ("12 mars 1887", "12 March 1887")."""
    if date is None:
        return ""
    if language == "fr":
        return format_french_date(date, precision or "day")
    pattern = {"year": "Y", "month": "F Y"}.get(precision, "j F Y")
    return dateformat.format(date, pattern)


def document_date(document) -> str:
    """Show a document's date in its corpus language, at the precision it is known."""
    if document is None or document.date is None:
        return ""
    return format_date(document.date, document.date_precision,
                       getattr(document.sub_corpus, "language", "fr"))
