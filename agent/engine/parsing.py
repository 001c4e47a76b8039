"""Parse model output into typed decisions with one tolerant parser."""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import BaseModel, ValidationError

_FENCE = re.compile(r"```[a-zA-Z0-9_-]*")


class OutputParseError(ValueError):
    """Signal model output that is not usable; the caller may ask again."""

    retryable = True


class OutputSchemaError(OutputParseError):
    """Signal a JSON object that does not fit the expected schema."""


def _outermost_object(text: str) -> str | None:
    """Return the first balanced {...} span, honouring JSON strings."""
    start = text.find("{")
    while start != -1:
        depth = 0
        in_string = False
        escaped = False
        for pos in range(start, len(text)):
            char = text[pos]
            if in_string:
                if escaped:
                    escaped = False
                elif char == "\\":
                    escaped = True
                elif char == '"':
                    in_string = False
            elif char == '"':
                in_string = True
            elif char == "{":
                depth += 1
            elif char == "}":
                depth -= 1
                if depth == 0:
                    return text[start : pos + 1]
        # Unbalanced from this brace: try the next one.
        start = text.find("{", start + 1)
    return None


def _drop_trailing_commas(text: str) -> str:
    """Remove commas that directly precede } or ], outside strings."""
    out: list[str] = []
    in_string = False
    escaped = False
    for pos, char in enumerate(text):
        if in_string:
            out.append(char)
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
            continue
        if char == '"':
            in_string = True
        elif char == ",":
            rest = text[pos + 1 :].lstrip()
            if rest[:1] in ("}", "]"):
                continue
        out.append(char)
    return "".join(out)


def parse_json_object(text: str) -> dict[str, Any]:
    """Extract the outermost JSON object from model text."""
    cleaned = _FENCE.sub("", text or "")
    span = _outermost_object(cleaned)
    if span is None:
        raise OutputParseError("no JSON object found in the reply")
    for candidate in (span, _drop_trailing_commas(span)):
        try:
            value = json.loads(candidate)
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict):
            return value
    raise OutputParseError("the reply's JSON object is malformed")


def parse_output[M: BaseModel](text: str, model: type[M]) -> M:
    """Parse model text into the given pydantic model."""
    data = parse_json_object(text)
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or '(root)'}: {err['msg']}"
            for err in exc.errors()[:5]
        )
        message = f"the reply does not fit {model.__name__}: {problems}"
        raise OutputSchemaError(message) from exc
