"""Each worker sweeps on a timer: abandoned runs interrupted and resumed, lost queued runs sent
again (`services.investigations_sweep`)."""

import logging
import threading

from celery.signals import worker_ready, worker_shutdown
from django.db import connection

from agent.investigations.durability import sweep_every
from agent.investigations.services import investigations_sweep

logger = logging.getLogger(__name__)

_sweeper_stop = threading.Event()


@worker_ready.connect
def _start_sweeper(**_kwargs) -> None:
    # The timer lives in the worker's main process, not in a task: a sweep queued behind long
    # investigations would wait for a free pool process, and that is when it is needed most.
    _sweeper_stop.clear()
    threading.Thread(target=_sweep_forever, name="trace-sweeper", daemon=True).start()


@worker_shutdown.connect
def _stop_sweeper(**_kwargs) -> None:
    _sweeper_stop.set()


def _sweep_forever() -> None:
    """Sweep at once (runs orphaned by a dead worker), then every half sweep interval."""
    while True:
        try:
            result = investigations_sweep()
            if result.interrupted or result.resumed or result.requeued:
                logger.warning("sweep: %s", result)
        except Exception:  # the database or the broker may be restarting: try next time
            logger.exception("sweep failed")
        finally:
            connection.close()  # this thread's connection; never kept between sweeps
        if _sweeper_stop.wait(sweep_every()):
            return
