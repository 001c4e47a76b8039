"""Time from the end of an ingest until its documents are found by every channel.

Searches keep running in a second thread during the ingest: their latency and failures show
whether the archive kept answering while it grew.
"""

from __future__ import annotations

import json
import random
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from django.db import connection

from archive.chunking import chunk_text
from archive.importers.records import parse_date
from archive.models import Document
from archive.outbox import apply_pending
from archive.services import ingest_file
from common.document_keys import document_key
from common.search import DateWindow, SearchRequest
from measurement.scale.corpus import FRESH_SUB_CORPUS
from measurement.scale.queries import TEXT_CHANNELS, filters, request_for
from measurement.scale.results import percentiles
from retrieval import channels as registry

SAMPLE = 20
TIMEOUT_SECONDS = 900


@dataclass
class BackgroundSearches:
    """Run searches in a loop in another thread (its own database connection)."""

    questions: list[str]
    latencies: list[float] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def _run(self) -> None:
        number = 0
        try:
            while not self._stop.is_set():
                question = self.questions[number % len(self.questions)]
                channel = TEXT_CHANNELS[number % len(TEXT_CHANNELS)]
                request = request_for(channel, question, filters(number)[0])
                started = time.perf_counter()
                try:
                    registry.get(channel).search(request)
                except Exception as exc:  # noqa: BLE001 (a failure is what is measured)
                    self.failures.append(f"{channel}: {type(exc).__name__}: {exc}"[:300])
                self.latencies.append((time.perf_counter() - started) * 1000)
                number += 1
        finally:
            connection.close()

    def __enter__(self) -> BackgroundSearches:
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()


def _sample(path: Path, count: int) -> list[dict]:
    with path.open(encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle if line.strip()]
    return random.Random(7).sample(rows, min(count, len(rows)))


def _boundary_phrase(text: str) -> str:
    """Return five words either side of a sentence end past a third of ``text``.

    The synthetic documents reuse the demo's sentences, so a phrase inside one sentence is
    shared by many of them; two sentences side by side are this document's own.
    """
    words = text.split()
    start = len(words) // 3
    for i in range(max(start, 5), len(words) - 5):
        if words[i - 1].endswith((".", "!", "?")):
            return " ".join(words[i - 5 : i + 5])
    return " ".join(words[start : start + 10])


def _probe(channel: str, row: dict) -> SearchRequest:
    words = row["text"].split()
    if channel == "substring":
        query = _boundary_phrase(row["text"])
    elif channel == "dense":
        # The text of its first chunk: its own vector is the nearest there is.
        query = chunk_text(row["text"])[0].text
    else:
        query = " ".join(words[:40])
    date, _ = parse_date(row["date"], 0)
    assert date is not None
    window = DateWindow(date, date) if channel == "temporal" else None
    return SearchRequest(channel=channel, query=query, window=window,
                         sub_corpora=(FRESH_SUB_CORPUS[0],), limit=10)


def _found(channel: str, row: dict) -> bool:
    key = document_key(row["collection"], row["raw_id"])
    hits = registry.get(channel).search(_probe(channel, row))
    return key in {hit.document_key for hit in hits}


def measure_freshness(*, arrivals: Path, questions: list[str], provider: str,
                      workers: int) -> dict:
    """Ingest ``arrivals`` while searching, then poll each channel until it finds them."""
    # A rerun measures a fresh ingest again: arrivals left by an interrupted run go first.
    Document.objects.filter(sub_corpus__slug=FRESH_SUB_CORPUS[0]).delete()
    apply_pending()
    with BackgroundSearches(questions) as background:
        started = time.perf_counter()
        report = ingest_file(path=arrivals, embed=True, provider=provider, workers=workers,
                             commit_every_batch=True, batch_size=100)
        ingest_seconds = time.perf_counter() - started
        ended = time.perf_counter()
        sample = _sample(arrivals, SAMPLE)
        waiting = {channel: list(sample) for channel in (*TEXT_CHANNELS, "temporal")}
        found_after: dict[str, float | None] = {}
        while waiting and time.perf_counter() - ended < TIMEOUT_SECONDS:
            for channel in list(waiting):
                waiting[channel] = [row for row in waiting[channel] if not _found(channel, row)]
                if not waiting[channel]:
                    found_after[channel] = round(time.perf_counter() - ended, 2)
                    del waiting[channel]
            if waiting:
                time.sleep(1)
        for channel in waiting:
            found_after[channel] = None
    return {
        "documents": report.read, "created": report.created,
        "chunks_written": report.chunks_written, "ingest_seconds": round(ingest_seconds, 2),
        "chunks_per_second_with_embedding": round(report.chunks_written / ingest_seconds, 1),
        "found_after_seconds": found_after,
        "all_found_after_seconds": (None if None in found_after.values()
                                    else max(v for v in found_after.values() if v is not None)),
        "sampled_documents": len(sample),
        "searches_during_ingest": percentiles(background.latencies),
        "search_failures": len(background.failures),
        "failure_examples": background.failures[:3],
    }
