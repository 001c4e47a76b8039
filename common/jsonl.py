"""Read JSON Lines leniently: one verdict per non-blank line, so callers can name bad lines."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path

JsonVerdict = tuple[int, dict | None, str]

UTF8_BOM = b"\xef\xbb\xbf"


def json_object(line: str) -> tuple[dict | None, str]:
    """Parse one line: (object, "") or (None, what is wrong)."""
    try:
        value = json.loads(line)
    except json.JSONDecodeError as exc:
        return None, f"bad JSON ({exc.msg}, column {exc.colno})"
    except RecursionError:
        return None, "bad JSON (nested too deeply)"
    except ValueError as exc:  # e.g. an integer beyond the interpreter's digit limit
        return None, f"bad JSON ({exc})"
    if not isinstance(value, dict):
        return None, "expected a JSON object"
    return value, ""


def json_objects(lines: Iterable[str], *, start: int = 1) -> Iterator[JsonVerdict]:
    """Yield (line number, object, "") or (line number, None, what is wrong) per non-blank line."""
    for number, line in enumerate(lines, start=start):
        if not line.strip():
            continue
        value, problem = json_object(line)
        yield number, value, problem


def decode_line(raw: bytes) -> tuple[str | None, str]:
    """Decode one line of UTF-8: (text, "") or (None, what is wrong, with its column)."""
    try:
        return raw.decode("utf-8"), ""
    except UnicodeDecodeError as exc:
        where = f"byte 0x{raw[exc.start]:02x} at column {exc.start + 1}"
        return None, f"not UTF-8 text ({exc.reason}: {where})"


def json_file_objects(path: Path) -> Iterator[JsonVerdict]:
    """Read a UTF-8 file (a leading BOM is allowed) as ``json_objects`` reads lines.

    Each line is decoded on its own, so bytes that are not UTF-8 spoil only their line, which
    is reported with its exact number; the lines after it are read as usual.
    """
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if number == 1 and raw.startswith(UTF8_BOM):
                raw = raw[len(UTF8_BOM):]
            line, problem = decode_line(raw.rstrip(b"\r\n"))
            if line is None:
                yield number, None, problem
                continue
            if not line.strip():
                continue
            value, problem = json_object(line)
            yield number, value, problem
