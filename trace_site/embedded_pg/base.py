"""PostgreSQL backend whose connection parameters come from the embedded server."""

from pathlib import Path

from django.conf import settings
from django.db.backends.postgresql import base

from trace_site.embedded import ensure_postgres


class DatabaseWrapper(base.DatabaseWrapper):
    def get_connection_params(self):
        params = super().get_connection_params()
        params.update(ensure_postgres(Path(settings.TRACE_DATA_DIR)))
        return params
