"""Template helpers for investigation pages."""

from django import template

register = template.Library()


@register.filter
def sub_corpus_name(slug: str | None, names: dict[str, str] | None) -> str:
    """Show a sub-corpus by its name (the slug when unknown, "any sub-corpus" when none)."""
    if not slug:
        return "any sub-corpus"
    return (names or {}).get(slug, slug)
