"""Site-wide tasks."""

from celery import shared_task

# Imported with the tasks so that every worker writes the heartbeat /healthz reads.
from trace_site import worker_heartbeat  # noqa: F401


@shared_task(name="trace_site.ping")
def ping(payload: str) -> str:
    """Echo the payload back, proving a worker round-trip."""
    return f"pong:{payload}"
