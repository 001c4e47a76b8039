"""Health checks for the database, pgvector, Redis and a Celery worker round-trip."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from pathlib import Path

import redis
from django.conf import settings
from django.db import connection

from trace_site import embedded


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


def redis_client() -> redis.Redis:
    """Return a client of the configured Redis; the embedded one is started if it is down."""
    if settings.TRACE_EMBEDDED_REDIS:
        embedded.ensure_redis(Path(settings.TRACE_DATA_DIR))
    url = settings.TRACE_REDIS_URL
    if url.startswith("redis+socket://"):
        path = url.removeprefix("redis+socket://").split("?", 1)[0]
        return redis.Redis(unix_socket_path=path, socket_timeout=2)
    return redis.Redis.from_url(url, socket_timeout=2)


def check_redis() -> str:
    if not redis_client().ping():
        raise RuntimeError("no PONG")
    return "ok"


def check_worker(timeout: float = 5.0) -> str:
    from trace_site.tasks import ping

    token = uuid.uuid4().hex[:8]
    started = time.monotonic()
    reply = ping.delay(token).get(timeout=timeout)
    if reply != f"pong:{token}":
        raise RuntimeError(f"unexpected reply {reply!r}")
    return f"ok ({(time.monotonic() - started) * 1000:.0f} ms)"


CHECKS: dict[str, Callable[[], str]] = {
    "database": check_database,
    "vector": check_vector,
    "redis": check_redis,
    "worker": check_worker,
}


def run_checks() -> tuple[bool, dict[str, str]]:
    """Run every check; return overall health and a message per check."""
    results: dict[str, str] = {}
    healthy = True
    for name, check in CHECKS.items():
        try:
            results[name] = check()
        except Exception as exc:  # a health page reports every failure, whatever its type
            healthy = False
            results[name] = f"error: {type(exc).__name__}: {exc}"
    return healthy, results
