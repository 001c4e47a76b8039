"""Run a search for the search page and shape the results per document."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from django.urls import NoReverseMatch, reverse

from retrieval import phase1
from retrieval.fusion import rrf
from retrieval.selectors import chunk_texts, documents_by_id
from retrieval.types import DateWindow

SNIPPET_CHARS = 320


@dataclass
class ResultGroup:
    """One document in the search results, with the chunk that matched."""

    rank: int
    score: float
    document: object
    chunk_id: int
    channel_ranks: dict[str, int]
    before: str
    match: str
    after: str
    url: str | None


def _fold(text: str) -> str:
    # Keep one character per input character so positions still index the original text.
    return "".join(
        unicodedata.normalize("NFKD", ch)[0] if ch.strip() else " " for ch in text.lower()
    )


def snippet(text: str, query: str, width: int = SNIPPET_CHARS) -> tuple[str, str, str]:
    """Return (before, match, after) around the first query word found in the text."""
    folded = _fold(text)
    words = sorted(set(re.findall(r"[^\W_]{3,}", _fold(query))), key=len, reverse=True)
    position, length = -1, 0
    for word in words:
        found = folded.find(word)
        if found != -1 and (position == -1 or found < position):
            position, length = found, len(word)
    if position == -1:
        cut = text[:width]
        return cut + ("…" if len(text) > width else ""), "", ""
    start = max(0, position - width // 2)
    end = min(len(text), position + length + width // 2)
    before = ("…" if start else "") + text[start:position]
    after = text[position + length:end] + ("…" if end < len(text) else "")
    return before, text[position:position + length], after


def document_url(document_id: int, chunk_id: int) -> str | None:
    """Return the viewer URL highlighting a chunk, or None while no viewer is installed."""
    try:
        return f"{reverse('document_detail', args=[document_id])}?chunk={chunk_id}"
    except NoReverseMatch:
        return None


def search_documents(
    *, query: str, channel: str, sub_corpora, window: DateWindow | None, cap: int
) -> list[ResultGroup]:
    """Run the chosen channel (or hybrid) and return one group per document."""
    if channel == "hybrid":
        constraints = phase1.base_constraints(sub_corpus=sub_corpora, cap=max(cap, 50))
        if window is not None:
            constraints = constraints.with_(date_window=window)
        fused = rrf(phase1.channel_rankings(query, constraints))[:cap]
        rows = [(f.document_id, f.best_chunk_id, f.score, f.channel_ranks) for f in fused]
    else:
        hits = phase1.run_channel(phase1.SearchRequest(
            channel=channel, query=query, window=window, sub_corpus=sub_corpora, cap=cap))
        rows = [(h.document_id, h.chunk_id, h.score, {h.channel: h.rank}) for h in hits]
    documents = documents_by_id(r[0] for r in rows)
    texts = chunk_texts(r[1] for r in rows)
    groups = []
    for rank, (doc_id, chunk_id, score, ranks) in enumerate(rows, start=1):
        before, match, after = snippet(texts[chunk_id][0], query)
        groups.append(ResultGroup(rank, score, documents[doc_id], chunk_id, ranks, before,
                                  match, after, document_url(doc_id, chunk_id)))
    return groups
