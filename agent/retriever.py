"""The engine's Retriever port over the archive in Postgres and the retrieval channels."""

from __future__ import annotations

import datetime as dt
import logging

from agent.engine.types import Candidate, SearchRequest, SubCorpusInfo
from archive.models import SubCorpus
from retrieval import phase1
from retrieval.selectors import chunk_texts
from retrieval.types import DateWindow

logger = logging.getLogger(__name__)


class ArchiveRetriever:
    """Answer the engine's warm starts and searches with the real channels.

    `allowed_sub_corpora` restricts every search to a pool (an evaluation on a slice of the
    archive); an explicit sub-corpus outside the pool finds nothing.
    """

    def __init__(self, allowed_sub_corpora: tuple[str, ...] | None = None):
        self.allowed = allowed_sub_corpora

    def sub_corpora(self) -> list[SubCorpusInfo]:
        rows = SubCorpus.objects.order_by("slug")
        if self.allowed is not None:
            rows = rows.filter(slug__in=self.allowed)
        return [
            SubCorpusInfo(slug=sc.slug, name=sc.name, genre=sc.genre, description=sc.description)
            for sc in rows
        ]

    def _scope(self, sub_corpus: str | None) -> str | tuple[str, ...] | None:
        if self.allowed is None:
            return sub_corpus or None
        if sub_corpus:
            return sub_corpus if sub_corpus in self.allowed else ()
        return self.allowed

    def warm_start(self, query: str, *, sub_corpus: str | None, target_date: str | None,
                   exclude_chunks: frozenset[int], exclude_documents: frozenset[str],
                   limit: int) -> list[Candidate]:
        scope = self._scope(sub_corpus)
        if scope == ():
            return []
        fused = phase1.warm_start(
            query, sub_corpus=scope, target_date=_date(target_date),
            exclude_chunks=sorted(exclude_chunks), exclude_documents=sorted(exclude_documents),
            limit=limit,
        )
        texts = chunk_texts([hit.best_chunk_id for hit in fused])
        return [
            _candidate(hit.best_chunk_id, hit.document_key, hit.sub_corpus, hit.score,
                       dict(hit.channel_ranks), texts)
            for hit in fused if hit.best_chunk_id in texts
        ]

    def search(self, request: SearchRequest, *, exclude_chunks: frozenset[int],
               exclude_documents: frozenset[str], limit: int) -> list[Candidate]:
        try:
            window = _window(request.date_from, request.date_to)
        except ValueError as exc:
            logger.info("ignoring a search with a bad date window: %s", exc)
            return []
        scope = self._scope(request.sub_corpus)
        if (request.channel == "temporal" and window is None) or scope == ():
            return []
        results = phase1.search(phase1.SearchRequest(
            channel=request.channel, query=request.query, window=window,
            sub_corpus=scope, exclude_chunks=sorted(exclude_chunks),
            exclude_documents=sorted(exclude_documents), cap=limit,
        ))
        texts = {r.hit.chunk_id: (r.chunk_text, r.document_title, r.document_date)
                 for r in results}
        return [
            _candidate(r.hit.chunk_id, r.hit.document_key, r.hit.sub_corpus, r.hit.score,
                       dict(r.channel_ranks), texts)
            for r in results
        ]


def _candidate(chunk_id: int, key: str, sub_corpus: str, score: float,
               ranks: dict[str, int], texts: dict) -> Candidate:
    text, title, day = texts[chunk_id]
    return Candidate(chunk_id=chunk_id, document_id=key, sub_corpus=sub_corpus,
                     title=title or key, date=day.isoformat() if day else None, text=text,
                     score=float(score), channel_ranks=ranks)


def _date(value: str | None) -> dt.date | None:
    if not value:
        return None
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        return None


def _window(date_from: str | None, date_to: str | None) -> DateWindow | None:
    """Build an inclusive window; one open end is closed at the other end's day."""
    start = dt.date.fromisoformat(date_from) if date_from else None
    end = dt.date.fromisoformat(date_to) if date_to else None
    if start is None and end is None:
        return None
    return DateWindow(start or end, end or start)
