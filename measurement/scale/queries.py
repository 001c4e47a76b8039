"""The benchmark's queries: dev questions as text, filters by sub-corpus and date range."""

from __future__ import annotations

import datetime as dt
import json
import re
import time
from dataclasses import dataclass
from pathlib import Path

from common.search import DateWindow, SearchRequest
from measurement.scale.corpus import FIRST_DAY, LAST_DAY, SUB_CORPORA
from measurement.scale.results import percentiles
from retrieval import channels as registry
from retrieval.warm_start import warm_start

TEXT_CHANNELS = ("bm25", "dense", "substring")
_WORD = re.compile(r"\w+")


def read_questions(path: Path, count: int) -> list[str]:
    """Return the first ``count`` questions of a questions JSON Lines file."""
    questions: list[str] = []
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                questions.append(json.loads(line)["question"])
            if len(questions) >= count:
                break
    return questions


def substring_phrase(question: str) -> str:
    """Return the two longest words of ``question``: the kind of phrase a substring search asks."""
    words = sorted(_WORD.findall(question), key=len, reverse=True)[:2]
    return " ".join(words)


@dataclass(frozen=True)
class Filter:
    name: str
    sub_corpora: tuple[str, ...] | None = None
    window: DateWindow | None = None


def filters(number: int) -> list[Filter]:
    """Return the filters of query ``number``: none, one sub-corpus, one decade."""
    start = FIRST_DAY.year + (number * 7) % (LAST_DAY.year - FIRST_DAY.year - 9)
    decade = DateWindow(dt.date(start, 1, 1), dt.date(start + 9, 12, 31))
    return [
        Filter("unfiltered"),
        Filter("sub_corpus", sub_corpora=(SUB_CORPORA[number % len(SUB_CORPORA)][0],)),
        Filter("date_range", window=decade),
    ]


def _request(channel: str, question: str, where: Filter, limit: int = 10) -> SearchRequest:
    query = substring_phrase(question) if channel == "substring" else question
    return SearchRequest(channel=channel, query=query, sub_corpora=where.sub_corpora,
                         window=where.window, limit=limit)


def _timed(call) -> float:
    started = time.perf_counter()
    call()
    return (time.perf_counter() - started) * 1000


def channel_latencies(questions: list[str], warm_up: list[str]) -> dict:
    """Time every text channel per filter, the temporal channel, and the warm start (ms).

    The ``warm_up`` questions (others than the timed ones) run first, as a server that has been
    answering questions would have: their own figures are kept apart, under "cold".
    """
    if not warm_up:
        return _timed_questions(questions)
    cold = _timed_questions(warm_up)
    return {**_timed_questions(questions), "cold": cold}


def _timed_questions(questions: list[str]) -> dict:
    samples: dict[str, dict[str, list[float]]] = {}
    for number, question in enumerate(questions):
        for where in filters(number):
            for channel in TEXT_CHANNELS:
                request = _request(channel, question, where)
                samples.setdefault(channel, {}).setdefault(where.name, []).append(
                    _timed(lambda r=request, c=channel: registry.get(c).search(r)))
            if where.name == "date_range":
                continue  # the temporal channel always ranks by a window: timed as "unfiltered"
            window = filters(number)[2].window
            temporal = SearchRequest(channel="temporal", query=question, window=window,
                                     sub_corpora=where.sub_corpora, limit=10)
            samples.setdefault("temporal", {}).setdefault(where.name, []).append(
                _timed(lambda r=temporal: registry.get("temporal").search(r)))
        samples.setdefault("warm_start", {}).setdefault("unfiltered", []).append(_timed(
            lambda q=question: warm_start(SearchRequest(channel="warm_start", query=q,
                                                        limit=10))))
    return {channel: {name: percentiles(values) for name, values in by_filter.items()}
            for channel, by_filter in samples.items()}


def request_for(channel: str, question: str, where: Filter) -> SearchRequest:
    """Return the request the latency measure sends to ``channel``."""
    return _request(channel, question, where)
