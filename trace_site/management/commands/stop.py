"""Stop the embedded PostgreSQL and Redis of the data directory, whoever started them."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand

from trace_site import embedded


class Command(BaseCommand):
    help = "Stop the embedded PostgreSQL and Redis running on TRACE_DATA_DIR (make stop)."
    requires_system_checks = []

    def handle(self, *args, **options):
        data_dir = Path(settings.TRACE_DATA_DIR)
        redis = "Redis stopped" if embedded.stop_redis(data_dir) else "Redis not running"
        postgres = (
            "PostgreSQL stopped" if embedded.stop_postgres(data_dir) else "PostgreSQL not running"
        )
        self.stdout.write(f"{redis}; {postgres}.")
