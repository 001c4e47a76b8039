"""Read JSON Lines leniently: one verdict per non-blank line, so callers can name bad lines."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator


def json_objects(lines: Iterable[str], *, start: int = 1) -> Iterator[tuple[int, dict | None, str]]:
    """Yield (line number, object, "") or (line number, None, what is wrong) per non-blank line."""
    for number, line in enumerate(lines, start=start):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            yield number, None, f"bad JSON ({exc.msg}, column {exc.colno})"
            continue
        if not isinstance(value, dict):
            yield number, None, "expected a JSON object"
            continue
        yield number, value, ""
