"""Retrieve from a list of chunks in memory, with the channels of the real archive retriever.

A real retriever for benchmarks (`manage.py bench_engine`) and tests: no database, no index.
"""

from __future__ import annotations

import math
from collections import Counter
from datetime import date

from agent.engine.text import STOPWORDS, stem, tokens
from common.search import Hit, SearchRequest, SubCorpusInfo
from common.text import casefold_without_accents


def _terms(text: str) -> list[str]:
    return [stem(tok) for tok in tokens(text) if len(tok) > 2 and tok not in STOPWORDS]


def chunk(chunk_id: int, document_id: int, document_key: str, sub_corpus: str, date: str | None,
          text: str, title: str = "") -> Hit:
    """Describe one chunk of the in-memory archive as an unranked hit with its passage."""
    return Hit(chunk_id=chunk_id, document_id=document_id, document_key=document_key,
               sub_corpus=sub_corpus, score=0.0, rank=0, channel="", text=text,
               title=title or document_key, date=date)


class InMemoryRetriever:
    """Retrieve from a small list of chunks with BM25, stem overlap, substring and date channels.

    Like the archive retriever it honours every restriction and exclusion of the request and
    returns each document once, by its best chunk, with its passage.
    """

    def __init__(self, chunks: list[Hit], sub_corpora: list[SubCorpusInfo]) -> None:
        self.chunks = list(chunks)
        self.infos = list(sub_corpora)
        self.calls: list[tuple[str, SearchRequest]] = []
        self._terms = {c.chunk_id: _terms(c.text) for c in self.chunks}
        self._df: Counter[str] = Counter()
        for terms in self._terms.values():
            self._df.update(set(terms))
        lengths = [len(t) for t in self._terms.values()] or [1]
        self._avg = sum(lengths) / len(lengths)

    def sub_corpora(self) -> list[SubCorpusInfo]:
        """List the sub-corpora."""
        return list(self.infos)

    def _pool(self, request: SearchRequest) -> list[Hit]:
        return [c for c in self.chunks
                if (request.sub_corpora is None or c.sub_corpus in request.sub_corpora)
                and (request.document_ids is None or c.document_id in request.document_ids)
                and c.chunk_id not in request.exclude_chunk_ids
                and c.document_key not in request.exclude_document_keys]

    def _bm25(self, query: str, pool: list[Hit]) -> dict[int, float]:
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

    def _overlap(self, query: str, pool: list[Hit]) -> dict[int, float]:
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
    def _temporal(request: SearchRequest, pool: list[Hit]) -> dict[int, float]:
        assert request.window is not None
        day = request.window.start
        return {c.chunk_id: math.exp(-abs((date.fromisoformat(c.date[:10]) - day).days) / 30)
                for c in pool if c.date}

    @staticmethod
    def _ranked(scores: dict[int, float], pool: list[Hit], channel: str) -> list[Hit]:
        """Max-pool per document, then order by score (ties by chunk id), ranked from 1."""
        best: dict[str, Hit] = {}
        by_id = {c.chunk_id: c for c in pool}
        for chunk_id, score in sorted(scores.items(), key=lambda kv: (-kv[1], kv[0])):
            c = by_id[chunk_id]
            if c.document_key not in best:
                best[c.document_key] = c.with_(score=score, rank=len(best) + 1, channel=channel)
        return list(best.values())

    def warm_start(self, request: SearchRequest) -> list[Hit]:
        """Fuse the channels with RRF (k=60) over max-pooled documents."""
        self.calls.append(("warm_start", request))
        pool = self._pool(request)
        channels = {"bm25": self._bm25(request.query, pool),
                    "dense": self._overlap(request.query, pool)}
        if request.window is not None:
            channels["temporal"] = self._temporal(request, pool)
        fused: dict[str, float] = {}
        ranks: dict[str, dict[str, int]] = {}
        best: dict[str, Hit] = {}
        for name, scores in channels.items():
            for hit in self._ranked(scores, pool, name):
                key = hit.document_key
                fused[key] = fused.get(key, 0.0) + 1 / (60 + hit.rank)
                ranks.setdefault(key, {})[name] = hit.rank
                best.setdefault(key, hit)
        order = sorted(fused, key=lambda d: (-fused[d], d))[: request.limit]
        return [best[d].with_(score=fused[d], rank=rank, channel=request.channel,
                              channel_ranks=ranks[d])
                for rank, d in enumerate(order, start=1)]

    def search(self, request: SearchRequest) -> list[Hit]:
        """Run one channel; the window filters the others and ranks the temporal channel.

        As the archive's temporal channel, it ranks every dated chunk by its distance to the
        window, past the window's edges.
        """
        self.calls.append(("search", request))
        pool = self._pool(request)
        window = request.window
        if request.channel == "temporal" and window is not None:
            return self._channel_hits(self._temporal(request, pool), pool, request)
        if window is not None:
            start, end = window.start.isoformat(), window.end.isoformat()
            pool = [c for c in pool if c.date and start <= c.date[:10] <= end]
        if request.channel == "bm25":
            scores = self._bm25(request.query, pool)
        elif request.channel == "dense":
            scores = self._overlap(request.query, pool)
        elif request.channel == "substring":
            needle = casefold_without_accents(request.query).strip()
            scores = {c.chunk_id: 1.0 for c in pool
                      if needle and needle in casefold_without_accents(c.text)}
        else:
            scores = {c.chunk_id: 1.0 / (1 + i) for i, c in
                      enumerate(sorted(pool, key=lambda c: (c.date or "", c.chunk_id)))}
        return self._channel_hits(scores, pool, request)

    @staticmethod
    def _channel_hits(scores: dict[int, float], pool: list[Hit],
                      request: SearchRequest) -> list[Hit]:
        ranked = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))[: request.limit]
        by_id = {c.chunk_id: c for c in pool}
        return [by_id[cid].with_(score=score, rank=rank, channel=request.channel,
                                 channel_ranks={request.channel: rank})
                for rank, (cid, score) in enumerate(ranked, start=1)]
