"""PostgreSQL backend whose connection parameters come from the embedded server."""

from pathlib import Path

import psycopg
from django.conf import settings
from django.db.backends.postgresql import base

from trace_site.embedded import postgres_params


class DatabaseWrapper(base.DatabaseWrapper):
    def get_connection_params(self):
        params = super().get_connection_params()
        params.update(postgres_params(Path(settings.TRACE_DATA_DIR)))
        return params

    def get_new_connection(self, conn_params):
        try:
            return super().get_new_connection(conn_params)
        except psycopg.OperationalError:
            # The server stopped (or moved its socket) since this process found it: look again.
            conn_params.update(postgres_params(Path(settings.TRACE_DATA_DIR), refresh=True))
            return super().get_new_connection(conn_params)
