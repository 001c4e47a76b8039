"""Celery tasks: thin wrappers that load ids and call a service."""

from celery import shared_task
from celery.signals import worker_ready


@shared_task(name="agent.run_investigation", acks_late=True, reject_on_worker_lost=True)
def run_investigation(investigation_id: int) -> str:
    """Run or resume one investigation."""
    from agent.services import investigation_execute

    return investigation_execute(investigation_id=investigation_id).status


@worker_ready.connect
def _mark_orphaned_runs(**_kwargs) -> None:
    # A worker that was killed mid-run leaves "running" rows behind: make them resumable.
    from agent.services import investigations_mark_interrupted

    investigations_mark_interrupted()
