"""Worker start: bring the indexes up to date in the background (never at import)."""

import logging
import os
import threading

from celery.signals import worker_ready
from django.conf import settings
from django.db import connection

from retrieval.maintenance import indexes_start_up

logger = logging.getLogger(__name__)


@worker_ready.connect(dispatch_uid="trace-indexes-start-up")
def _bring_indexes_up_to_date(**_kwargs) -> None:
    # A thread: a long repair must not keep the worker from taking investigations (they read
    # the last committed index meanwhile).
    threading.Thread(target=_start_up, name="trace-index-start-up", daemon=True).start()


def _start_up() -> None:
    directory = settings.TRACE_BM25_DIR
    if os.path.isdir(directory) and not os.access(directory, os.W_OK):
        # A read-only mount: another process (compose's indexer) is the index's one writer.
        logger.info("BM25 index at %s is read-only here; its writer keeps it current", directory)
        return
    try:
        logger.info("indexes at worker start: %s", indexes_start_up())
    except Exception:  # the database may be starting: the next ingest or start catches up
        logger.exception("index start-up failed")
    finally:
        connection.close()
