"""Read query parameters strictly: ASCII digits only, bounded; a malformed value is a 400.

Every view reads its numeric query parameters through these helpers, and every form its numbers
and dates through ``IntegerField`` / ``DateField`` below (Python's ``int()`` and ``strptime``
read "٣" as 3), so that "²", "-1", "1e3"
or a 40-digit number never reaches ``int()``, a database query or ``reverse()``: Django answers
``BadRequest`` with a 400 page. Text parameters are bounded and cleared of NUL characters by
``trace_site.limits.RequestLimitsMiddleware`` before any view runs.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.core.exceptions import BadRequest, ValidationError
from django.http import HttpRequest

# Identifiers and offsets are stored as 64-bit integers: 18 digits always fit.
MAX_DIGITS = 18


def natural(value: str, *, label: str) -> int:
    """Parse a non-negative integer written in ASCII digits, or raise BadRequest."""
    if not (value.isascii() and value.isdigit()):
        raise BadRequest(f"{label} must be a whole number written with the digits 0-9.")
    if len(value) > MAX_DIGITS:
        raise BadRequest(f"{label} has more than {MAX_DIGITS} digits.")
    return int(value)


def natural_param(request: HttpRequest, name: str) -> int | None:
    """Return the query parameter as a non-negative integer, None when absent or empty."""
    raw = request.GET.get(name, "").strip()
    return natural(raw, label=f"The parameter {name!r}") if raw else None


def span_param(request: HttpRequest, name: str) -> tuple[int, int] | None:
    """Return "start-end" character offsets (start before end), None when absent or empty."""
    raw = request.GET.get(name, "").strip()
    if not raw:
        return None
    start, sep, end = raw.partition("-")
    label = f"The parameter {name!r}"
    if not sep:
        raise BadRequest(f"{label} must be two offsets written start-end.")
    first, last = natural(start, label=label), natural(end, label=label)
    if first >= last:
        raise BadRequest(f"{label} must start before it ends.")
    return first, last


def _ascii_only(value: Any) -> None:
    if isinstance(value, str) and any(ch.isdigit() and not ch.isascii() for ch in value):
        raise ValidationError("Write numbers with the digits 0-9.", code="invalid")


class IntegerField(forms.IntegerField):
    """A form's whole number, written with the ASCII digits only."""

    def to_python(self, value: Any) -> int | None:
        _ascii_only(value)
        return super().to_python(value)


class DateField(forms.DateField):
    """A form's date, written with the ASCII digits only."""

    def to_python(self, value: Any) -> Any:
        _ascii_only(value)
        return super().to_python(value)
