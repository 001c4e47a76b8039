"""Template helpers for investigation pages."""

from django import template

register = template.Library()


@register.filter
def sub_corpus_name(slug: str | None, names: dict[str, str] | None) -> str:
    """Show a sub-corpus by its name (the slug when unknown, "any sub-corpus" when none)."""
    if not slug:
        return "any sub-corpus"
    return (names or {}).get(slug, slug)


FINISH_REASONS = {
    "finish_action": "The agent finished",
    "budget": "The step budget ran out",
    "max_raw_steps": "Too many steps without progress",
    "parse_failures": "Too many unusable replies in a row",
    "repeated_search": "The same search was asked twice in a row",
    "cancelled": "Cancelled",
}
HOLD_REASONS = {
    "widened_window": "dated just outside the asked window: only the silent widening found it",
    "missing_verdict": "the review gave it no verdict",
    "unreviewed": "still unreviewed when the sub-question ended",
    "agent": "held by the agent",
}
STEP_ACTIONS = {"search": "searches", "review": "reviews the passages", "finish": "finishes"}


@register.filter
def finish_reason(reason: str) -> str:
    """Say in words why a sub-question's loop ended."""
    return FINISH_REASONS.get(reason, reason)


@register.filter
def hold_reason(reason: str | None) -> str:
    """Say in words why a passage was held without the agent deciding so."""
    return HOLD_REASONS.get(reason or "", reason or "held")


@register.filter
def step_action(action: str) -> str:
    """Say in words what an agent step does."""
    return STEP_ACTIONS.get(action, action)
