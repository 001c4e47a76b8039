"""Let each Celery worker say, every few seconds, that it is alive and how busy it is.

The worker's main process writes one Redis key per queue it consumes, from a thread of its own:
its pool may be full of long investigations and still be alive. The key expires after three
missed beats, so a dead worker disappears on its own. /healthz reads these keys.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from dataclasses import dataclass
from typing import Any

from celery.signals import worker_ready, worker_shutdown
from celery.worker import state
from django.conf import settings

from trace_site.redis_client import redis_client

logger = logging.getLogger(__name__)

KEY_PREFIX = "trace:worker-heartbeat"


def heartbeat_key(queue: str, hostname: str) -> str:
    """Return the Redis key of one worker on one queue."""
    return f"{KEY_PREFIX}:{queue}:{hostname}"


def heartbeat_pattern(queue: str) -> str:
    """Return the pattern matching every worker's key on a queue."""
    return f"{KEY_PREFIX}:{queue}:*"


def expiry_seconds() -> float:
    """Return how long a beat stays valid: three intervals."""
    return 3 * settings.TRACE_WORKER_HEARTBEAT_SECONDS


@dataclass(frozen=True)
class WorkerBeat:
    """One worker's last word: who, how many pool processes, how many tasks running, when."""

    hostname: str
    pid: int
    concurrency: int
    active: int
    at: float

    @property
    def busy(self) -> bool:
        """Tell whether every pool process is running a task."""
        return self.concurrency > 0 and self.active >= self.concurrency

    def as_json(self) -> str:
        """Serialise the beat."""
        return json.dumps(self.__dict__)

    @classmethod
    def from_json(cls, raw: bytes | str) -> WorkerBeat:
        """Read a beat written by as_json."""
        data: dict[str, Any] = json.loads(raw)
        return cls(hostname=str(data["hostname"]), pid=int(data["pid"]),
                   concurrency=int(data["concurrency"]), active=int(data["active"]),
                   at=float(data["at"]))


class _Beater:
    """Write this worker's beat on a timer until told to stop."""

    def __init__(self, consumer: Any) -> None:
        self.hostname = str(consumer.hostname)
        self.queues = sorted(consumer.app.amqp.queues.consume_from or {})
        pool = getattr(consumer, "pool", None)
        self.concurrency = int(getattr(pool, "num_processes", 0) or
                               getattr(consumer.controller, "concurrency", 0) or 0)
        self.stop = threading.Event()

    def beat(self) -> WorkerBeat:
        return WorkerBeat(hostname=self.hostname, pid=os.getpid(),
                          concurrency=self.concurrency, active=len(state.active_requests),
                          at=time.time())

    def run(self) -> None:
        every = settings.TRACE_WORKER_HEARTBEAT_SECONDS
        while True:
            try:
                client = redis_client()
                payload = self.beat().as_json()
                for queue in self.queues:
                    client.set(heartbeat_key(queue, self.hostname), payload,
                               px=int(expiry_seconds() * 1000))
            except Exception:  # Redis may be restarting: beat again next time
                logger.warning("worker heartbeat not written", exc_info=True)
            if self.stop.wait(every):
                return

    def clear(self) -> None:
        try:
            redis_client().delete(*(heartbeat_key(q, self.hostname) for q in self.queues))
        except Exception:
            logger.warning("worker heartbeat not cleared", exc_info=True)


_beaters: list[_Beater] = []


@worker_ready.connect(dispatch_uid="trace-worker-heartbeat-start")
def _start_beating(sender: Any = None, **_kwargs: Any) -> None:
    beater = _Beater(sender)
    _beaters.append(beater)
    threading.Thread(target=beater.run, name="trace-worker-heartbeat", daemon=True).start()


@worker_shutdown.connect(dispatch_uid="trace-worker-heartbeat-stop")
def _stop_beating(**_kwargs: Any) -> None:
    while _beaters:
        beater = _beaters.pop()
        beater.stop.set()
        beater.clear()
