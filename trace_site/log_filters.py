"""Log filters, loaded by the settings' LOGGING before any app (so nothing here imports Django)."""

from __future__ import annotations

import logging


class RefusalsOnOneLine(logging.Filter):
    """Log a refused request (a 4xx, a suspicious header) on one line, without a traceback.

    Django logs a ``BadRequest`` or a ``SuspiciousOperation`` it answers itself (a Host header
    not allowed, say) with the exception's traceback: a refusal is not a crash, and anyone could
    fill the log with such tracebacks. A 500 keeps its traceback.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        refusal = record.name.startswith("django.security") or (
            record.name == "django.request" and getattr(record, "status_code", 500) < 500)
        if refusal:
            record.exc_info = None
            record.exc_text = None
        return True
