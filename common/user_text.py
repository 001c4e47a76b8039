"""Checks of a user's text before it is stored."""

from __future__ import annotations


def text_problem(value: str, *, label: str, max_chars: int) -> str:
    """Say what is wrong with a user's text for storage ("" when nothing is)."""
    if "\x00" in value:
        return f"{label} contains a NUL character (\\x00)"
    if any("\ud800" <= c <= "\udfff" for c in value):
        return f"{label} contains an invalid character (a lone surrogate)"
    if len(value) > max_chars:
        return f"{label} has {len(value):,} characters; at most {max_chars:,}"
    return ""
