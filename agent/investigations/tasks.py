"""Celery tasks: thin wrappers that load ids and call a service; each worker sweeps on a timer."""

import logging
import threading

from celery import shared_task
from celery.signals import worker_ready, worker_shutdown

logger = logging.getLogger(__name__)


@shared_task(name="agent.run_investigation", acks_late=True, reject_on_worker_lost=True)
def run_investigation(investigation_id: int) -> str:
    """Run or resume one investigation."""
    from agent.investigations.services import investigation_execute

    return investigation_execute(investigation_id=investigation_id).status


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
    from django.db import connection

    from agent.investigations.durability import sweep_every
    from agent.investigations.services import investigations_sweep

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
