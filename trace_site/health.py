"""Health checks for the database, pgvector, Redis and the Celery workers, within a deadline.

Every check runs in a thread of its own and the page waits at most TRACE_HEALTH_TIMEOUT
seconds for all of them together: a component that hangs is reported as not answering, it
never holds the page. Checking starts nothing (an embedded Redis that is down is reported down).

Workers are judged by the heartbeat each one writes to Redis (trace_site.worker_heartbeat), not
by a task round-trip: a worker whose pool is full of investigations is busy, not down.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from django.conf import settings
from django.db import connection, connections

from agent.investigations.judges import judge_in_use
from retrieval.bm25 import indexer
from trace_site.redis_client import redis_client
from trace_site.worker_heartbeat import WorkerBeat, expiry_seconds, heartbeat_pattern

# States of a check that leave the instance healthy; any other first word is a failure.
HEALTHY_STATES = ("ok", "busy")


def check_database() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        cursor.fetchone()
    return "ok"


def check_vector() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
        row = cursor.fetchone()
        if row is None:
            raise RuntimeError("pgvector extension missing (run migrate)")
        cursor.execute("SELECT '[1,0]'::vector <=> '[0,1]'::vector")
        distance = cursor.fetchone()[0]
    if abs(distance - 1.0) > 1e-6:
        raise RuntimeError(f"cosine distance check returned {distance}")
    return f"ok (pgvector {row[0]})"


def check_redis() -> str:
    if not redis_client().ping():
        raise RuntimeError("no PONG")
    return "ok"


def worker_beats(queue: str) -> list[WorkerBeat]:
    """Return the live heartbeats of the workers consuming a queue."""
    client = redis_client()
    keys = list(client.scan_iter(match=heartbeat_pattern(queue), count=100))
    values = client.mget(keys) if keys else []
    return [WorkerBeat.from_json(value) for value in values if value]


def check_worker() -> str:
    """Say whether a worker consumes the task queue, and whether all its processes are busy."""
    queue = settings.TRACE_CELERY_QUEUE
    beats = worker_beats(queue)
    if not beats:
        return (f"down: no worker heartbeat on queue {queue!r} in the last "
                f"{expiry_seconds():g} s")
    total = sum(b.concurrency for b in beats)
    active = sum(b.active for b in beats)
    age = time.time() - max(b.at for b in beats)
    workers = f"{len(beats)} worker{'s' if len(beats) != 1 else ''}"
    if all(b.busy for b in beats):
        return (f"busy: {workers}, all {total} processes running tasks "
                f"(new investigations wait in the queue); last heartbeat {age:.1f} s ago")
    return f"ok: {workers}, {active}/{total} processes busy; last heartbeat {age:.1f} s ago"


def check_bm25() -> str:
    """Report the BM25 index (engine, chunks) and its outbox backlog; it builds nothing."""
    return indexer.state()


def check_judge() -> str:
    """Say which judge offline runs use; the rules, with the reason, when the model failed."""
    return f"ok: {judge_in_use().label}"


CHECKS: dict[str, Callable[[], str]] = {
    "database": check_database,
    "vector": check_vector,
    "bm25": check_bm25,
    "redis": check_redis,
    "worker": check_worker,
    "judge": check_judge,
}


def _run_one(check: Callable[[], str], results: dict[str, str], name: str) -> None:
    try:
        results[name] = check()
    except Exception as exc:  # a health page reports every failure, whatever its type
        results[name] = f"error: {type(exc).__name__}: {exc}"
    finally:
        connections.close_all()  # this thread's connections only


def is_healthy(message: str) -> bool:
    """Tell whether a check's message reports a working component."""
    return message.split(":", 1)[0].split(" ", 1)[0] in HEALTHY_STATES


def run_checks(timeout: float | None = None) -> tuple[bool, dict[str, str]]:
    """Run every check at once; return overall health and a message per check, in time."""
    limit = settings.TRACE_HEALTH_TIMEOUT if timeout is None else timeout
    results: dict[str, str] = {}
    threads = [threading.Thread(target=_run_one, args=(check, results, name), daemon=True,
                                name=f"health-{name}") for name, check in CHECKS.items()]
    deadline = time.monotonic() + limit
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))
    report = {name: results.get(name, f"error: no answer within {limit:g} s") for name in CHECKS}
    if not is_healthy(report["redis"]) and not is_healthy(report["worker"]):
        report["worker"] = "unknown: Redis does not answer, so worker heartbeats cannot be read"
    return all(is_healthy(message) for message in report.values()), report
