"""Site-wide tasks."""

from celery import shared_task


@shared_task(name="trace_site.ping")
def ping(payload: str) -> str:
    """Echo the payload back, proving a worker round-trip."""
    return f"pong:{payload}"
