"""Celery tasks: thin wrappers that load ids and call a service."""

from celery import shared_task

from agent.investigations.execution import investigation_execute


# The name is kept from the first release: a message queued by it still finds its task.
@shared_task(name="agent.run_investigation", acks_late=True, reject_on_worker_lost=True)
def execute_investigation(investigation_id: int) -> str:
    """Run or resume one investigation."""
    return investigation_execute(investigation_id=investigation_id).status
