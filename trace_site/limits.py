"""Limits on what a user can send: body size, parameter size, NUL characters, question fields.

``RequestLimitsMiddleware`` refuses, before any view runs, a body larger than
TRACE_MAX_REQUEST_BYTES (413, without reading it), and a parameter holding a NUL character
or longer than TRACE_MAX_PARAM_CHARS (400). The question checks are shared by every way an
investigation is created (the Ask form, batch files, the service layer).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable

from django.conf import settings
from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent
from django.http import HttpRequest, HttpResponse
from django.http.multipartparser import MultiPartParserError

# A refused body is read and discarded up to this size (bounded in time too), so that the
# client, still sending, receives the 413 and its message instead of a broken connection.
DRAIN_MAX_BYTES = 64_000_000
DRAIN_MAX_SECONDS = 2.0

# Lengths of the investigation fields a user supplies (agent.models.Investigation).
QID_MAX_CHARS = 200
QUESTION_TYPE_MAX_CHARS = 100
GOLD_ID_MAX_CHARS = 400
GOLD_IDS_MAX = 200


def _megabytes(size: int) -> str:
    return f"{size / 1_000_000:.1f} MB"


def _refusal(status: int, message: str) -> HttpResponse:
    response = HttpResponse(message + "\n", status=status, content_type="text/plain; charset=utf-8")
    response["Cache-Control"] = "no-store"
    return response


def text_problem(value: str, *, label: str, max_chars: int) -> str:
    """Say what is wrong with a user's text for storage ("" when nothing is)."""
    if "\x00" in value:
        return f"{label} contains a NUL character (\\x00)"
    if any("\ud800" <= c <= "\udfff" for c in value):
        return f"{label} contains an invalid character (a lone surrogate)"
    if len(value) > max_chars:
        return f"{label} has {len(value):,} characters; at most {max_chars:,}"
    return ""


def question_problem(
    *, question: str, qid: str = "", question_type: str = "", gold_keys: Iterable[str] = ()
) -> str:
    """Say what is wrong with the fields of a question ("" when nothing is)."""
    gold_keys = list(gold_keys)
    checks = [
        text_problem(question, label="the question", max_chars=settings.TRACE_MAX_QUESTION_CHARS),
        text_problem(qid, label="the qid", max_chars=QID_MAX_CHARS),
        text_problem(question_type, label="the question_type", max_chars=QUESTION_TYPE_MAX_CHARS),
        *(text_problem(g, label="a gold id", max_chars=GOLD_ID_MAX_CHARS) for g in gold_keys),
    ]
    if len(gold_keys) > GOLD_IDS_MAX:
        checks.append(f"{len(gold_keys)} gold ids; at most {GOLD_IDS_MAX}")
    return next((c for c in checks if c), "")


def _content_length(request: HttpRequest) -> int:
    try:
        return int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return 0


def _parameter_problem(request: HttpRequest) -> str:
    limit = settings.TRACE_MAX_PARAM_CHARS
    for where, params in (("query", request.GET), ("form", request.POST)):
        for name, values in params.lists():
            shown = name[:40].replace("\x00", "\\x00")
            if "\x00" in name:
                return f"A {where} parameter name ({shown!r}) contains a NUL character (\\x00)."
            for value in values:
                if "\x00" in value:
                    return f"The {where} parameter {shown!r} contains a NUL character (\\x00)."
                if where == "query" and len(value) > limit:
                    return (f"The query parameter {shown!r} has {len(value):,} characters; "
                            f"at most {limit:,}.")
    for _, uploads in request.FILES.lists():
        if any("\x00" in (upload.name or "") for upload in uploads):
            return "An uploaded file name contains a NUL character (\\x00)."
    return ""


def _drain(request: HttpRequest, size: int) -> None:
    """Read and drop a refused body (never kept in memory), within the drain bounds."""
    if size > DRAIN_MAX_BYTES:
        return
    deadline = time.monotonic() + DRAIN_MAX_SECONDS
    try:
        while time.monotonic() < deadline and request.read(65536):
            pass
    except OSError:
        pass


class RequestLimitsMiddleware:
    """Refuse oversized bodies (413) and parameters with NUL or of excessive length (400)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        size, limit = _content_length(request), settings.TRACE_MAX_REQUEST_BYTES
        if size > limit:
            _drain(request, size)
            return _refusal(413, f"The request is too large: {_megabytes(size)} sent, at most "
                                 f"{_megabytes(limit)} accepted. Nothing was saved.")
        try:
            problem = _parameter_problem(request)
        except RequestDataTooBig:
            return _refusal(413, "The form data is too large: at most "
                                 f"{_megabytes(settings.DATA_UPLOAD_MAX_MEMORY_SIZE)} accepted "
                                 "outside files. Nothing was saved.")
        except (TooManyFieldsSent, MultiPartParserError) as exc:
            return _refusal(400, f"The request cannot be read ({exc}). Nothing was saved.")
        if problem:
            return _refusal(400, f"{problem} Remove it and try again; nothing was saved.")
        return self.get_response(request)
