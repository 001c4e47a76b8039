"""Read JSON Lines leniently: one verdict per non-blank line, so callers can name bad lines."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path

JsonVerdict = tuple[int, dict | None, str]


def json_objects(lines: Iterable[str], *, start: int = 1) -> Iterator[JsonVerdict]:
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


def json_file_objects(path: Path) -> Iterator[JsonVerdict]:
    """Read a UTF-8 file as ``json_objects`` reads lines; bytes that are not UTF-8 end it.

    The read stops at the first undecodable line with (line number, None, "not UTF-8 text …").
    """
    with path.open(encoding="utf-8", errors="strict") as handle:
        number = 0
        while True:
            number += 1
            try:
                line = handle.readline()
            except UnicodeDecodeError as exc:
                yield number, None, f"not UTF-8 text ({exc.reason})"
                return
            if not line:
                return
            yield from json_objects([line], start=number)
