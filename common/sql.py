"""SQL text helpers that need no database connection."""

from __future__ import annotations


def escape_like(text: str) -> str:
    """Escape the LIKE wildcards ``%`` and ``_`` (and the escape character ``\\``) in ``text``."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def like_pattern(text: str) -> str:
    """Return a LIKE pattern matching ``text`` anywhere: ``%text%``, wildcards in it escaped."""
    return f"%{escape_like(text)}%"
