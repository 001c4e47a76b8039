"""The one gate for request input: body size, parameter size, NUL characters, text fields.

``RequestLimitsMiddleware`` refuses, before any view runs (and before the session is read), a body
larger than TRACE_MAX_REQUEST_BYTES (413, without reading it), and a NUL character anywhere in the
path, a query or form parameter, a file name or a cookie, or a query parameter longer than
TRACE_MAX_PARAM_CHARS (400). Numbers in query parameters are parsed by ``archive.params``
(ASCII digits only). The checks of the text fields a user
stores (a question's fields, notes, override reasons) live with the investigations
(`agent/question_limits.py`, over `common/user_text.py`), shared by forms, batch files and the
service layer.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from django.conf import settings
from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent
from django.http import HttpRequest, HttpResponse
from django.http.multipartparser import MultiPartParserError

# A refused body is read and discarded up to this size (bounded in time too), so that the
# client, still sending, receives the 413 and its message instead of a broken connection.
DRAIN_MAX_BYTES = 64_000_000
DRAIN_MAX_SECONDS = 2.0

def _megabytes(size: int) -> str:
    return f"{size / 1_000_000:.1f} MB"


def _refusal(status: int, message: str) -> HttpResponse:
    response = HttpResponse(message + "\n", status=status, content_type="text/plain; charset=utf-8")
    response["Cache-Control"] = "no-store"
    return response


def _content_length(request: HttpRequest) -> int:
    try:
        return int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return 0


def _shown(name: str) -> str:
    return name[:40].replace("\x00", "\\x00")


def _path_or_cookie_problem(request: HttpRequest) -> str:
    if "\x00" in request.path:
        return "The address contains a NUL character (\\x00)."
    for name, value in request.COOKIES.items():
        if "\x00" in name or "\x00" in value:
            return (f"The cookie {_shown(name)!r} contains a NUL character (\\x00); "
                    "clear this site's cookies.")
    return ""


def _parameter_problem(request: HttpRequest) -> str:
    limit = settings.TRACE_MAX_PARAM_CHARS
    for where, params in (("query", request.GET), ("form", request.POST)):
        for name, values in params.lists():
            shown = _shown(name)
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
    """Refuse oversized bodies (413), NUL anywhere and overlong query parameters (400)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        size, limit = _content_length(request), settings.TRACE_MAX_REQUEST_BYTES
        if size > limit:
            _drain(request, size)
            return _refusal(413, f"The request is too large: {_megabytes(size)} sent, at most "
                                 f"{_megabytes(limit)} accepted. Nothing was saved.")
        try:
            problem = _path_or_cookie_problem(request) or _parameter_problem(request)
        except RequestDataTooBig:
            return _refusal(413, "The form data is too large: at most "
                                 f"{_megabytes(settings.DATA_UPLOAD_MAX_MEMORY_SIZE)} accepted "
                                 "outside files. Nothing was saved.")
        except (TooManyFieldsSent, MultiPartParserError) as exc:
            return _refusal(400, f"The request cannot be read ({exc}). Nothing was saved.")
        if problem:
            return _refusal(400, f"{problem} Remove it and try again; nothing was saved.")
        return self.get_response(request)
