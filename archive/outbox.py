"""Index outbox: documents whose rows changed, marked for every derived index until it applies them.

A write to the archive marks the documents it touched in the same transaction
(`record_changes`), one row per registered index, so what rolls back leaves no mark and what
commits cannot be missed. Each index registers a consumer (`register_consumer`) that drains its
own marks (`drain`): it reads the documents' committed state, brings its index up to date,
commits the index, and only then deletes the marks it read. A crash in between leaves the marks,
and replaying them is idempotent. One writer per index across processes: `apply_pending` holds
a Postgres advisory lock per consumer while it runs.
"""

from __future__ import annotations

import logging
import threading
import zlib
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager

from django.db import connection

logger = logging.getLogger(__name__)

# First key of the two-key advisory locks taken by index writers ("TRCX").
_LOCK_CLASS = 0x5452_4358
# Documents per index commit when draining a backlog: bounds memory and the work a crash loses.
DRAIN_BATCH = 500

_consumers: dict[str, Callable[[], int]] = {}
_registry_lock = threading.Lock()


def register_consumer(name: str, apply: Callable[[], int]) -> None:
    """Register an index that drains its pending marks (retrieval does this in AppConfig.ready)."""
    if not name or len(name) > 100:
        raise ValueError(f"a consumer name must have 1 to 100 characters, not {name!r}")
    with _registry_lock:
        _consumers[name] = apply


def consumers() -> tuple[str, ...]:
    """Return the registered consumer names, in registration order."""
    return tuple(_consumers)


def record_changes(document_ids: Iterable[int]) -> None:
    """Mark documents whose rows changed (created, replaced or deleted) for every index.

    Call it inside the transaction that writes them (what rolls back leaves no mark).
    """
    ids = sorted({int(i) for i in document_ids})
    names = list(_consumers)
    if not ids or not names:
        return
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO archive_indexoutbox (consumer, document_id, created_at) "
            "SELECT c, d, now() FROM unnest(%s::text[]) AS c, unnest(%s::bigint[]) AS d",
            [names, ids],
        )


def pending(consumer: str, limit: int) -> list[tuple[int, int]]:
    """Return up to ``limit`` of a consumer's oldest marks as (mark id, document id)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT id, document_id FROM archive_indexoutbox WHERE consumer = %s "
            "ORDER BY id LIMIT %s",
            [consumer, limit],
        )
        return [(row[0], row[1]) for row in cursor.fetchall()]


def clear(mark_ids: list[int]) -> None:
    """Delete marks that were applied (only those read: newer marks of a document stay)."""
    if not mark_ids:
        return
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM archive_indexoutbox WHERE id = ANY(%s)", [mark_ids])


def rebuild_covering(consumer: str, build: Callable[[], object]) -> int:
    """Build a consumer's index whole from the committed rows, then drop the marks it covers.

    The marks committed before the build began describe rows the build reads (or newer ones),
    so replaying them would only redo its work; marks committed during the build stay for the
    next drain. Returns the number of marks dropped.
    """
    with connection.cursor() as cursor:
        cursor.execute("SELECT id FROM archive_indexoutbox WHERE consumer = %s", [consumer])
        covered = [row[0] for row in cursor.fetchall()]
    build()
    for i in range(0, len(covered), 50_000):
        clear(covered[i : i + 50_000])
    return len(covered)


def backlog() -> dict[str, int]:
    """Return the number of documents waiting, per registered consumer."""
    counts = dict.fromkeys(_consumers, 0)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT consumer, count(DISTINCT document_id) FROM archive_indexoutbox "
            "GROUP BY consumer"
        )
        counts.update(dict(cursor.fetchall()))
    return counts


def drain(consumer: str, apply_documents: Callable[[list[int]], object],
          batch: int = DRAIN_BATCH) -> int:
    """Apply a consumer's marks batch by batch; return how many documents were applied.

    ``apply_documents`` must bring the index in line with the committed state of those
    documents (delete them, re-add those that still exist) and commit the index before it
    returns: the marks are deleted right after.
    """
    applied = 0
    while True:
        marks = pending(consumer, batch * 4)
        if not marks:
            return applied
        document_ids = list(dict.fromkeys(document_id for _, document_id in marks))[:batch]
        chosen = set(document_ids)
        apply_documents(document_ids)
        clear([mark_id for mark_id, document_id in marks if document_id in chosen])
        applied += len(document_ids)


def _lock_key(name: str) -> int:
    # crc32 is stable across processes (hash() is salted per process); fit it in an int4.
    value = zlib.crc32(name.encode())
    return value - (1 << 32) if value >= (1 << 31) else value


@contextmanager
def writer_lock(name: str) -> Iterator[None]:
    """Hold the cross-process lock of one index's writer (a Postgres advisory lock)."""
    key = _lock_key(name)
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_lock(%s, %s)", [_LOCK_CLASS, key])
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_unlock(%s, %s)", [_LOCK_CLASS, key])


class ApplyFailed(Exception):
    """One or more indexes could not apply their marks; the marks are kept for a replay."""


def apply_pending() -> dict[str, int]:
    """Bring every registered index up to date with what is committed; return counts per index.

    Every consumer is tried; if any fails, ApplyFailed names them after the others ran.
    """
    counts: dict[str, int] = {}
    failures: list[str] = []
    for name, apply in list(_consumers.items()):
        try:
            with writer_lock(name):
                counts[name] = apply()
        except Exception as exc:  # one broken index must not keep the others behind
            logger.exception("index %s could not apply its pending changes", name)
            failures.append(f"{name}: {type(exc).__name__}: {exc}")
    if failures:
        raise ApplyFailed("; ".join(failures))
    return counts


def apply_pending_logged() -> dict[str, int]:
    """Run `apply_pending` after a commit: a failure is logged, the marks wait for a replay."""
    try:
        return apply_pending()
    except ApplyFailed:
        return {}
