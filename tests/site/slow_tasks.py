"""A task that keeps a worker process busy, loaded only into the workers of the health tests."""

import time

from celery import shared_task


@shared_task(name="tests.site.hold")
def hold(seconds: float) -> str:
    """Occupy one pool process for a while."""
    time.sleep(seconds)
    return "held"
