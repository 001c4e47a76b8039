"""A client of the configured Redis with short timeouts, for checks that must not hang.

Used by the health checks and by each worker's heartbeat thread (trace_site.worker_heartbeat).
"""

from __future__ import annotations

import redis
from django.conf import settings
from redis.backoff import NoBackoff
from redis.retry import Retry


def redis_client(timeout: float = 1.0) -> redis.Redis:
    """Return a client of the configured Redis with short timeouts; it starts nothing."""
    url = settings.TRACE_REDIS_URL
    # One try: the client's default retries with back-off would outlast the page's deadline.
    if url.startswith("redis+socket://"):
        path = url.removeprefix("redis+socket://").split("?", 1)[0]
        return redis.Redis(unix_socket_path=path, socket_timeout=timeout,
                           socket_connect_timeout=timeout, retry=Retry(NoBackoff(), 0))
    return redis.Redis.from_url(url, socket_timeout=timeout, socket_connect_timeout=timeout,
                                retry=Retry(NoBackoff(), 0))
