"""Run a search for the search page and shape the results per document."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from django.urls import reverse

from common.search import Hit, SearchRequest
from common.text import lower_keeping_positions
from retrieval.analysis import build_analyzer, field_language
from retrieval.fusion import rrf
from retrieval.search import search
from retrieval.selectors import documents_by_id, with_passages
from retrieval.warm_start import CHANNEL_POOL, DEFAULT_CHANNELS, run_channels

SNIPPET_CHARS = 320
HYBRID = "hybrid"
# Cosine similarity a passage found by the dense channel alone must reach to be shown. Dense
# search always returns nearest neighbours: on the demo archive (multilingual USE), nonsense
# queries ("zzzzqqq", "qwxz", "xyzzy plugh") reach 0.30-0.47 while real questions' best passages
# sit at 0.28-0.36, so no floor separates them by similarity; a dense-only hit is shown only
# above every nonsense probe, and BM25's matches carry the page.
DENSE_ONLY_FLOOR = 0.5


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
    url: str


def snippet(text: str, query: str, width: int = SNIPPET_CHARS,
            language: str = "fr") -> tuple[str, str, str]:
    """Return (before, match, after): the text around what matched the query, centred on it.

    What matched is the densest run of the query's words in the text, read as the BM25 channel
    reads them (whole words, case and accents folded, stop words left out, a plural "s" or "x"
    ignored): "discours de M. Lejeune" for "discours Lejeune", never "des" inside a longer word.
    A text with none of them falls back to the first query word found as a substring.
    """
    found = _matched_run(text, query, language)
    if found is None:
        found = _first_substring(text, query)
    if found is None:
        cut = text[:width]
        return cut + ("…" if len(text) > width else ""), "", ""
    position, end_of_match = found
    length = end_of_match - position
    room = max(0, width - length) // 2
    start = max(0, position - room)
    end = min(len(text), end_of_match + room)
    before = ("…" if start else "") + text[start:position]
    after = text[end_of_match:end] + ("…" if end < len(text) else "")
    return before, text[position:end_of_match], after


# Terms of the query that mark nothing: the analyzer's stop words, and "les", which whoosh's
# French list lacks.
_UNMARKED = frozenset({"les"})
_RUN_GAP = 2  # matched words at most this many indexed words apart belong to one run
_RUN_CHARS = 120  # a longer run is marked by its first word only


@functools.lru_cache(maxsize=8)
def _analyzer(language: str):
    return build_analyzer(field_language(language))


def _term(word: str) -> str:
    return word[:-1] if len(word) > 4 and word[-1] in "sx" else word


def _matched_run(text: str, query: str, language: str) -> tuple[int, int] | None:
    analyzer = _analyzer(language)
    wanted = {_term(token.text) for token in analyzer(query) if token.text not in _UNMARKED}
    if not wanted:
        return None
    tokens = [(index, token.startchar, token.endchar, _term(token.text))
              for index, token in enumerate(analyzer(text, chars=True))]
    matched = [token for token in tokens if token[3] in wanted]
    if not matched:
        return None
    runs: list[list[tuple[int, int, int, str]]] = [[matched[0]]]
    for token in matched[1:]:
        if token[0] - runs[-1][-1][0] <= _RUN_GAP + 1:
            runs[-1].append(token)
        else:
            runs.append([token])
    best = max(runs, key=lambda run: (len({token[3] for token in run}), len(run), -run[0][1]))
    start, end = best[0][1], best[-1][2]
    if end - start > _RUN_CHARS:
        end = best[0][2]
    return start, end


def _first_substring(text: str, query: str) -> tuple[int, int] | None:
    # One folded character per character, so a position found in `folded` indexes `text`.
    folded = lower_keeping_positions(text)
    words = sorted(
        set(re.findall(r"[^\W_]{3,}", lower_keeping_positions(query))), key=len, reverse=True
    )
    position, length = -1, 0
    for word in words:
        found = folded.find(word)
        if found != -1 and (position == -1 or found < position):
            position, length = found, len(word)
    return None if position == -1 else (position, position + length)


def document_url(document_id: int, chunk_id: int) -> str:
    """Return the document viewer's URL with one chunk highlighted."""
    return f"{reverse('document_detail', args=[document_id])}?chunk={chunk_id}"


def above_dense_floor(fused: list[Hit], dense: list[Hit],
                      floor: float = DENSE_ONLY_FLOOR) -> list[Hit]:
    """Drop fused hits only the dense channel found, unless their similarity reaches `floor`."""
    similarity = {hit.document_key: hit.score for hit in dense}
    return [hit for hit in fused
            if set(hit.channel_ranks) != {"dense"}
            or similarity.get(hit.document_key, 0.0) >= floor]


def search_documents(request: SearchRequest) -> list[ResultGroup]:
    """Run the request's channel, or the page's hybrid, and return one group per document.

    The hybrid fuses bm25 and dense with equal weights, the date window filtering both.
    """
    if request.channel == HYBRID:
        pool = request.with_(limit=max(request.limit, CHANNEL_POOL))
        rankings = run_channels(pool, DEFAULT_CHANNELS)
        hits = above_dense_floor(rrf(rankings, channel=HYBRID), rankings.get("dense", []))
        hits = hits[: request.limit]
    else:
        hits = search(request)
    hits = with_passages(hits)
    documents = documents_by_id(hit.document_id for hit in hits)
    groups = []
    for rank, hit in enumerate(hits, start=1):
        before, match, after = snippet(hit.text, request.query)
        groups.append(ResultGroup(rank, hit.score, documents[hit.document_id], hit.chunk_id,
                                  dict(hit.channel_ranks), before, match, after,
                                  document_url(hit.document_id, hit.chunk_id)))
    return groups
