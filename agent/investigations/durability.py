"""Keep runs honest about being alive: heartbeats during long steps and writes that reconnect."""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable
from datetime import timedelta

from celery import current_app
from django.conf import settings
from django.db import InterfaceError, OperationalError, close_old_connections, connection
from django.utils import timezone

from agent.models import Investigation

logger = logging.getLogger(__name__)

# Errors that mean "the database connection went away", not "this write is wrong".
CONNECTION_ERRORS = (OperationalError, InterfaceError)


def stale_after() -> timedelta:
    """Return how old a heartbeat may be before its run counts as abandoned."""
    return timedelta(seconds=settings.TRACE_SWEEP_SECONDS / 2)


def sweep_every() -> float:
    """Return the pause between two sweeps of one worker."""
    return settings.TRACE_SWEEP_SECONDS / 2


def queued_task_ids(queue: str) -> set[str]:
    """Return the ids of the tasks waiting in a queue of the broker (Redis), unread by workers.

    Celery's inspect API sees only the tasks workers hold, not those still in the queue, so the
    queue is read directly; of each message only the task id of Celery's message protocol
    (`headers["id"]`) is used, and each run stores the id of the task sent for it.
    """

    with current_app.connection_for_read() as conn:
        raw_messages = conn.default_channel.client.lrange(queue, 0, -1)
    return {task_id for raw in raw_messages
            if (task_id := json.loads(raw).get("headers", {}).get("id"))}


def with_reconnect[T](write: Callable[[], T], *, pause: float = 1.0, attempts: int = 2) -> T:
    """Run a database write; while the connection is lost, reconnect and try again."""
    for attempt in range(1, attempts + 1):
        try:
            return write()
        except CONNECTION_ERRORS as exc:
            if attempt == attempts or not connection.get_autocommit() or connection.in_atomic_block:
                raise  # inside a transaction the caller must roll back first
            logger.warning("database connection lost (%s); reconnecting (%d/%d)",
                           exc, attempt, attempts)
            connection.close()
            close_old_connections()
            time.sleep(pause)
    raise AssertionError("unreachable")


class Heartbeat:
    """Refresh a running investigation's heartbeat from a thread while the run works.

    Long model calls and slow retrievals emit no event for a while; the thread keeps proving
    that the process is alive. It only touches the row while this attempt owns it.
    """

    def __init__(self, investigation_id: int, attempt: int, every: float | None = None):
        self.investigation_id = investigation_id
        self.attempt = attempt
        self.every = settings.TRACE_HEARTBEAT_SECONDS if every is None else every
        self._stop = threading.Event()
        self._thread = threading.Thread(
            target=self._run, name=f"heartbeat-{investigation_id}", daemon=True
        )

    def __enter__(self) -> Heartbeat:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=self.every + 5)

    def _run(self) -> None:
        try:
            while not self._stop.wait(self.every):
                try:
                    Investigation.objects.filter(
                        pk=self.investigation_id, attempts=self.attempt,
                        status=Investigation.Status.RUNNING,
                    ).update(heartbeat_at=timezone.now())
                except CONNECTION_ERRORS as exc:
                    logger.warning("heartbeat of investigation %s not saved: %s",
                                   self.investigation_id, exc)
                    connection.close()  # the next beat reconnects
        finally:
            connection.close()  # this thread's own connection
