"""The Celery application; tasks live in each app's tasks.py."""

import os
from pathlib import Path

from celery import Celery
from django.conf import settings

from trace_site import embedded

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "trace_site.settings")

app = Celery("trace")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@app.on_after_configure.connect
def _start_embedded_redis(sender, source, **kwargs) -> None:
    """Start the embedded Redis, if it is the broker, before the first connection to it.

    Celery reads its configuration before any broker or result-backend connection, so every
    process that sends tasks, reads results or runs a worker gets the server started here.
    """
    if settings.TRACE_EMBEDDED_REDIS and not source.task_always_eager:
        embedded.ensure_redis(Path(settings.TRACE_DATA_DIR))
