"""Bring every derived index in line with Postgres at start-up (web server and worker)."""

from __future__ import annotations

import logging

from archive.outbox import apply_pending, writer_lock
from retrieval import vocabulary
from retrieval.bm25 import indexer

logger = logging.getLogger(__name__)


def indexes_start_up() -> dict[str, str]:
    """Repair what is missing or partial, replay the outbox; describe what was done per index."""
    with writer_lock(indexer.CONSUMER):
        report = indexer.repair()
    done = {indexer.CONSUMER: f"{report.action} ({report.documents_written} documents written"
                              + (f"; {report.reason})" if report.reason else ")")}
    with writer_lock(vocabulary.CONSUMER):
        done[vocabulary.CONSUMER] = vocabulary.repair()
    for name, count in apply_pending().items():
        done[name] = done.get(name, "up to date") + f", {count} pending applied"
    return done
