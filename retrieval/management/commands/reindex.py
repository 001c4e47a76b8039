"""Bring the BM25 index up to date, or rebuild it from Postgres with --full."""

from __future__ import annotations

import time

from django.core.management.base import BaseCommand

from archive.outbox import writer_lock
from retrieval.bm25 import indexer, store
from retrieval.maintenance import indexes_start_up


class Command(BaseCommand):
    help = (
        "Repair the BM25 index (re-index only documents missing or differing from Postgres) and "
        "apply the pending outbox; --full rebuilds it beside the live one and swaps it in."
    )

    def add_arguments(self, parser):
        parser.add_argument("--full", action="store_true", help="rebuild the whole index")

    def handle(self, *args, **options):
        started = time.perf_counter()
        if options["full"]:
            with writer_lock(indexer.CONSUMER):
                written = indexer.rebuild()
            self.stdout.write(f"Rebuilt the {store.engine_name()} index: {written} documents.")
        for name, done in indexes_start_up().items():
            self.stdout.write(f"{name}: {done}")
        self.stdout.write(f"{indexer.state()} ({time.perf_counter() - started:.1f} s)")
