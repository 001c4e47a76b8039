"""The one gate for request input: body size and encoding, parameters, NUL characters, path ids.

``RequestLimitsMiddleware`` refuses, before any view runs (and before the session is read), a body
larger than TRACE_MAX_REQUEST_BYTES (413, without reading it); a malformed Content-Length; a form
body declared in any charset but UTF-8, or one Django cannot read; bytes that are not UTF-8 in the
query string or a form field; a NUL character anywhere in the path, a query or form parameter, a
file name or a cookie; a query parameter longer than TRACE_MAX_PARAM_CHARS; and a numeric path id
of more than ``archive.params.MAX_DIGITS`` digits (each a 400 with its reason, answered here so that
nothing after the gate reads the body again). Numbers in query parameters are parsed by
``archive.params`` (ASCII digits only); every text a model stores is bounded by its model field
(``archive/field_limits.py``). The checks of the text fields a user
stores (a question's fields, notes, override reasons) live with the investigations
(`agent/investigations/question_limits.py`, over `common/user_text.py`), shared by forms,
batch files and the service layer.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from urllib.parse import unquote_to_bytes

from django.conf import settings
from django.contrib.admin.options import TO_FIELD_VAR as ADMIN_TO_FIELD
from django.core.exceptions import (
    BadRequest,
    RequestDataTooBig,
    SuspiciousOperation,
    TooManyFieldsSent,
)
from django.core.handlers.wsgi import get_bytes_from_wsgi
from django.http import HttpRequest, HttpResponse
from django.http.multipartparser import MultiPartParserError

from archive.params import MAX_DIGITS

# The form encodings Django parses; their body must be UTF-8 (Django refuses any other charset for
# the first, and would decode the second's fields in the charset declared).
FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")
UTF8_NAMES = frozenset({"utf-8", "utf8"})

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


def _not_utf8(raw: bytes) -> bool:
    """Tell whether percent-encoded bytes (a query string, a form body) decode as UTF-8."""
    try:
        unquote_to_bytes(raw.replace(b"+", b" ")).decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False


def _header_problem(request: HttpRequest) -> str:
    length = request.META.get("CONTENT_LENGTH") or ""
    if length and not (length.isascii() and length.isdigit()):
        return "The Content-Length header is not a number of bytes."
    content_type = request.META.get("CONTENT_TYPE", "")
    media, _, params = content_type.partition(";")
    if media.strip().lower() in FORM_TYPES:
        for param in params.split(";"):
            name, _, value = param.partition("=")
            charset = value.strip().strip('"').lower()
            if name.strip().lower() == "charset" and charset not in UTF8_NAMES:
                return (f"The form is sent in the charset {_shown(charset)!r}; this site reads "
                        "forms in UTF-8 only.")
    if _not_utf8(get_bytes_from_wsgi(request.META, "QUERY_STRING", "")):
        return "The query string holds bytes that are not UTF-8."
    return ""


def _body_problem(request: HttpRequest) -> str:
    """Check an urlencoded body's raw bytes (multipart fields are checked once decoded)."""
    media = request.META.get("CONTENT_TYPE", "").partition(";")[0].strip().lower()
    if request.method == "POST" and media == FORM_TYPES[0] and _not_utf8(request.body):
        return "The form holds bytes that are not UTF-8."
    return ""


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
    multipart = request.content_type == FORM_TYPES[1]
    for where, params in (("query", request.GET), ("form", request.POST)):
        for name, values in params.lists():
            shown = _shown(name)
            if "\x00" in name:
                return f"A {where} parameter name ({shown!r}) contains a NUL character (\\x00)."
            for value in values:
                if "\x00" in value:
                    return f"The {where} parameter {shown!r} contains a NUL character (\\x00)."
                if where == "form" and multipart and "\ufffd" in value:  # bytes not UTF-8
                    return f"The form field {shown!r} holds bytes that are not UTF-8."
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
    """Refuse oversized bodies (413) and malformed input (400), each with its reason, before any
    view runs; answer a view's ``BadRequest`` as a 400 too (see the module docstring)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        size, limit = _content_length(request), settings.TRACE_MAX_REQUEST_BYTES
        if size > limit:
            _drain(request, size)
            return _refusal(413, f"The request is too large: {_megabytes(size)} sent, at most "
                                 f"{_megabytes(limit)} accepted. Nothing was saved.")
        try:
            problem = (_header_problem(request) or _path_or_cookie_problem(request)
                       or _body_problem(request) or _parameter_problem(request))
        except RequestDataTooBig:
            return _refusal(413, "The form data is too large: at most "
                                 f"{_megabytes(settings.DATA_UPLOAD_MAX_MEMORY_SIZE)} accepted "
                                 "outside files. Nothing was saved.")
        except (TooManyFieldsSent, MultiPartParserError, BadRequest, UnicodeError,
                LookupError, ValueError) as exc:
            # Answered here, whole: Django's own 400 page would read the body again (its CSRF
            # check) and fail the same way, which the server would turn into a 500.
            reason = str(exc)[:200].rstrip(".")
            return _refusal(400, f"The request cannot be read: {reason}. Nothing was saved.")
        if problem:
            return _refusal(400, f"{problem} Remove it and try again; nothing was saved.")
        return self.get_response(request)

    def process_view(self, request: HttpRequest, view_func: object, view_args: tuple,
                     view_kwargs: dict) -> HttpResponse | None:
        """Refuse a numeric path id no row can have (more digits than any stored id), and an
        empty ``_to_field`` on an admin page (Django's admin looks up a field named "")."""
        match = request.resolver_match
        if match is not None and "admin" in match.namespaces:
            for params in (request.GET, request.POST):
                if ADMIN_TO_FIELD in params and not params[ADMIN_TO_FIELD].strip():
                    return _refusal(400, f"The parameter {ADMIN_TO_FIELD!r} is empty.")
        for name, value in view_kwargs.items():
            if isinstance(value, int) and len(str(abs(value))) > MAX_DIGITS:
                return _refusal(400, f"The {name} in the address has more than {MAX_DIGITS} "
                                     "digits; no record has such a number.")
        return None

    def process_exception(self, request: HttpRequest, exception: Exception
                          ) -> HttpResponse | None:
        """Answer a view's refusal of its input (``BadRequest``: a malformed number, a field too
        long) or a suspicious request (the admin's ``DisallowedModelAdminToField``) with a 400
        and its reason, logged on one line: a refusal is not a crash, so no traceback."""
        if isinstance(exception, BadRequest):
            return _refusal(400, str(exception) or "The request was malformed.")
        if isinstance(exception, SuspiciousOperation):
            logging.getLogger(f"django.security.{type(exception).__name__}").warning(
                "%s: %s", request.path, exception)
            return _refusal(400, "The request was refused as suspicious "
                                 f"({type(exception).__name__}).")
        return None
