"""Provide fakes for tests and benchmarks: a scripted chat model, an in-memory retriever, sinks."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from datetime import date

from agent.engine.text import STOPWORDS, fold, stem, tokens
from agent.engine.types import Candidate, ChatResult, Event, SearchRequest, SubCorpusInfo

Reply = str | ChatResult | Callable[[str, str, str], str | ChatResult]


class ScriptExhausted(RuntimeError):
    """Signal that a scripted chat model has no reply left."""


@dataclass
class RecordedPrompt:
    """Keep one prompt a fake model received."""

    role: str
    system: str
    user: str


class ScriptedChatModel:
    """Return scripted replies in order; a reply may be a callable of (role, system, user)."""

    def __init__(self, replies: Iterable[Reply] = (), *, model: str = "scripted") -> None:
        self.replies = list(replies)
        self.model = model
        self.calls: list[RecordedPrompt] = []

    def add(self, *replies: Reply) -> None:
        """Append more scripted replies."""
        self.replies.extend(replies)

    def complete(self, *, role: str, system: str, user: str) -> ChatResult:
        """Serve the next scripted reply."""
        if len(self.calls) >= len(self.replies):
            raise ScriptExhausted(f"no scripted reply left for call {len(self.calls) + 1} ({role})")
        reply = self.replies[len(self.calls)]
        self.calls.append(RecordedPrompt(role, system, user))
        if callable(reply):
            reply = reply(role, system, user)
        if isinstance(reply, ChatResult):
            return reply
        return ChatResult(text=reply, model=self.model, input_tokens=len(system + user) // 4,
                          output_tokens=len(reply) // 4)


@dataclass
class ListSink:
    """Collect events; optionally cancel or fail after a number of events."""

    cancel_after: int | None = None
    fail_after: int | None = None
    events: list[Event] = field(default_factory=list)

    def emit(self, event: Event) -> None:
        """Store the event, or fail as configured."""
        if self.fail_after is not None and len(self.events) >= self.fail_after:
            raise RuntimeError("sink failure")
        self.events.append(event)

    def cancelled(self) -> bool:
        """Report cancellation once enough events have arrived."""
        return self.cancel_after is not None and len(self.events) >= self.cancel_after

    def kinds(self) -> list[str]:
        """List event kinds in order."""
        return [event.kind for event in self.events]

    def of(self, kind: str) -> list[Event]:
        """List events of one kind."""
        return [event for event in self.events if event.kind == kind]


def _terms(text: str) -> list[str]:
    return [stem(tok) for tok in tokens(text) if len(tok) > 2 and tok not in STOPWORDS]


class InMemoryRetriever:
    """Retrieve from a small list of chunks with BM25, stem overlap, substring and date channels."""

    def __init__(self, chunks: list[Candidate], sub_corpora: list[SubCorpusInfo]) -> None:
        self.chunks = list(chunks)
        self.infos = list(sub_corpora)
        self.calls: list[tuple[str, object]] = []
        self._terms = {c.chunk_id: _terms(c.text) for c in self.chunks}
        self._df: Counter[str] = Counter()
        for terms in self._terms.values():
            self._df.update(set(terms))
        lengths = [len(t) for t in self._terms.values()] or [1]
        self._avg = sum(lengths) / len(lengths)

    def sub_corpora(self) -> list[SubCorpusInfo]:
        """List the sub-corpora."""
        return list(self.infos)

    def _pool(self, sub_corpus: str | None, exclude_chunks: frozenset[int],
              exclude_documents: frozenset[str]) -> list[Candidate]:
        return [c for c in self.chunks if (sub_corpus is None or c.sub_corpus == sub_corpus)
                and c.chunk_id not in exclude_chunks and c.document_id not in exclude_documents]

    def _bm25(self, query: str, pool: list[Candidate]) -> dict[int, float]:
        q = set(_terms(query))
        n = len(self.chunks)
        scores: dict[int, float] = {}
        for c in pool:
            tf = Counter(self._terms[c.chunk_id])
            length = len(self._terms[c.chunk_id]) or 1
            score = 0.0
            for term in q:
                if tf[term]:
                    idf = math.log(1 + (n - self._df[term] + 0.5) / (self._df[term] + 0.5))
                    norm = 1.2 * (0.25 + 0.75 * length / self._avg)
                    score += idf * tf[term] * 2.2 / (tf[term] + norm)
            if score > 0:
                scores[c.chunk_id] = score
        return scores

    def _overlap(self, query: str, pool: list[Candidate]) -> dict[int, float]:
        q = set(_terms(query))
        scores = {}
        for c in pool:
            terms = set(self._terms[c.chunk_id])
            if q and terms:
                shared = len(q & terms)
                if shared:
                    scores[c.chunk_id] = shared / math.sqrt(len(q) * len(terms))
        return scores

    @staticmethod
    def _temporal(target: str, pool: list[Candidate]) -> dict[int, float]:
        day = date.fromisoformat(target)
        return {c.chunk_id: math.exp(-abs((date.fromisoformat(c.date[:10]) - day).days) / 30)
                for c in pool if c.date}

    @staticmethod
    def _ranked(scores: dict[int, float], pool: list[Candidate]) -> list[Candidate]:
        """Max-pool per document, then order by score (ties by chunk id)."""
        best: dict[str, Candidate] = {}
        by_id = {c.chunk_id: c for c in pool}
        for chunk_id, score in sorted(scores.items(), key=lambda kv: (-kv[1], kv[0])):
            c = by_id[chunk_id]
            if c.document_id not in best:
                best[c.document_id] = replace(c, score=score)
        return list(best.values())

    def warm_start(self, query: str, *, sub_corpus: str | None, target_date: str | None,
                   exclude_chunks: frozenset[int], exclude_documents: frozenset[str],
                   limit: int) -> list[Candidate]:
        """Fuse the channels with RRF (k=60) over max-pooled documents."""
        self.calls.append(("warm_start", (query, sub_corpus, target_date)))
        pool = self._pool(sub_corpus, exclude_chunks, exclude_documents)
        channels = {"bm25": self._bm25(query, pool), "dense": self._overlap(query, pool)}
        if target_date:
            channels["temporal"] = self._temporal(target_date, pool)
        fused: dict[str, float] = {}
        ranks: dict[str, dict[str, int]] = {}
        best: dict[str, Candidate] = {}
        for name, scores in channels.items():
            for rank, c in enumerate(self._ranked(scores, pool), start=1):
                fused[c.document_id] = fused.get(c.document_id, 0.0) + 1 / (60 + rank)
                ranks.setdefault(c.document_id, {})[name] = rank
                best.setdefault(c.document_id, c)
        order = sorted(fused, key=lambda d: (-fused[d], d))[:limit]
        return [replace(best[d], score=fused[d], channel_ranks=ranks[d]) for d in order]

    def search(self, request: SearchRequest, *, exclude_chunks: frozenset[int],
               exclude_documents: frozenset[str], limit: int) -> list[Candidate]:
        """Run one channel; dates bound the temporal channel and filter the others."""
        self.calls.append(("search", request))
        pool = self._pool(request.sub_corpus, exclude_chunks, exclude_documents)
        if request.date_from or request.date_to:
            pool = [c for c in pool if c.date
                    and (not request.date_from or c.date[:10] >= request.date_from)
                    and (not request.date_to or c.date[:10] <= request.date_to)]
        if request.channel == "bm25":
            scores = self._bm25(request.query, pool)
        elif request.channel == "dense":
            scores = self._overlap(request.query, pool)
        elif request.channel == "substring":
            needle = fold(request.query).strip()
            scores = {c.chunk_id: 1.0 for c in pool if needle and needle in fold(c.text)}
        else:
            scores = {c.chunk_id: 1.0 / (1 + i) for i, c in
                      enumerate(sorted(pool, key=lambda c: (c.date or "", c.chunk_id)))}
        ranked = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))[:limit]
        by_id = {c.chunk_id: c for c in pool}
        return [replace(by_id[cid], score=score, channel_ranks={request.channel: rank})
                for rank, (cid, score) in enumerate(ranked, start=1)]
