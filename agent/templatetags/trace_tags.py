"""Template helpers for investigation pages."""

import datetime as dt

from django import template
from django.utils.text import capfirst

from agent.wording import (
    FINISH_REASONS,
    HOLD_REASONS,
    STEP_ACTIONS,
    document_date,
    format_date,
)

register = template.Library()
register.filter("document_date", document_date)


@register.filter
def iso_date(value: str | None, language: str = "fr") -> str:
    """Show an ISO date string ("1887-03-12", "1887-03", "1887") in the corpus language."""
    if not value:
        return ""
    parts = str(value).split("-")
    try:
        numbers = [int(part) for part in parts]
        date = dt.date(numbers[0], numbers[1] if len(numbers) > 1 else 1,
                       numbers[2] if len(numbers) > 2 else 1)
    except (ValueError, IndexError):
        return str(value)
    precision = {1: "year", 2: "month"}.get(len(numbers), "day")
    return format_date(date, precision, language or "fr")


@register.filter
def sub_corpus_name(slug: str | None, names: dict[str, str] | None) -> str:
    """Show a sub-corpus by its name (the slug when unknown, "any sub-corpus" when none)."""
    if not slug:
        return "any sub-corpus"
    return (names or {}).get(slug, slug)


@register.filter
def finish_reason(reason: str) -> str:
    """Say in words why a sub-question's loop ended (the live story's wording, capitalised)."""
    return capfirst(FINISH_REASONS.get(reason, reason))


@register.filter
def hold_reason(reason: str | None) -> str:
    """Say in words why a passage was held without the agent deciding so."""
    return HOLD_REASONS.get(reason or "", reason or "held")


@register.filter
def step_action(action: str) -> str:
    """Say in words what an agent step does."""
    return STEP_ACTIONS.get(action, action)


@register.filter
def get_item(mapping, key):
    """Look a key up in a dict."""
    return mapping.get(key) if mapping else None


@register.filter
def confidence(value: float | None) -> str:
    """Show an OCR confidence (0-1) as a whole percentage: "87 %" ("" when there is none)."""
    if value is None:
        return ""
    return f"{round(float(value) * 100)} %"
