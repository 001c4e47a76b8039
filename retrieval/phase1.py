"""Phase 1 warm start (channels fused per sub-question) and the plain search entry point."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from retrieval import bm25, dense, substring, temporal
from retrieval.fusion import fused_as_hits, rrf
from retrieval.types import Constraints, DateWindow, FusedHit, Hit

# Each channel contributes this many documents to a fusion, whatever the final limit.
CHANNEL_POOL = 50
DEFAULT_CHANNELS = ("bm25", "dense")
CHANNELS = ("bm25", "dense", "temporal", "substring")
# RRF weight per channel (missing = 1.0). The dense channel (USE on long OCR chunks) is much
# weaker than BM25 here; at full weight it pulls fusion below BM25 alone, at 0.1 it breaks
# BM25's ties and adds its unique finds (measured on the dev questions; see the docs).
DEFAULT_WEIGHTS: dict[str, float] = {"dense": 0.1}


def _split_exclusions(values: Iterable[int | str]) -> tuple[tuple[int, ...], tuple[str, ...]]:
    ids = tuple(v for v in values if isinstance(v, int))
    keys = tuple(v for v in values if isinstance(v, str))
    return ids, keys


def _window(target: dt.date | DateWindow | None) -> DateWindow | None:
    if target is None or isinstance(target, DateWindow):
        return target
    return DateWindow.around(target)


def base_constraints(
    *,
    sub_corpus: str | Sequence[str] | None = None,
    document_ids: Sequence[int] | None = None,
    exclude_chunks: Iterable[int] = (),
    exclude_documents: Iterable[int | str] = (),
    cap: int = CHANNEL_POOL,
) -> Constraints:
    """Build channel constraints from the warm-start arguments."""
    if isinstance(sub_corpus, str):
        sub_corpora: tuple[str, ...] | None = (sub_corpus,)
    else:
        sub_corpora = tuple(sub_corpus) if sub_corpus is not None else None
    doc_ids, doc_keys = _split_exclusions(tuple(exclude_documents))
    return Constraints(
        sub_corpora=sub_corpora,
        document_ids=tuple(document_ids) if document_ids is not None else None,
        exclude_chunk_ids=tuple(exclude_chunks),
        exclude_document_ids=doc_ids,
        exclude_document_keys=doc_keys,
        cap=cap,
    )


def channel_rankings(
    query: str,
    constraints: Constraints,
    *,
    channels: Sequence[str] = DEFAULT_CHANNELS,
    target_date: dt.date | DateWindow | None = None,
) -> dict[str, list[Hit]]:
    """Run each channel inside the same constraints and return its pooled ranking."""
    rankings: dict[str, list[Hit]] = {}
    for name in channels:
        if name == "bm25":
            rankings[name] = bm25.search(query, constraints)
        elif name == "dense":
            rankings[name] = dense.search(query, constraints)
        elif name == "substring":
            rankings[name] = substring.search(query, constraints)
        elif name == "temporal":
            window = _window(target_date)
            if window is not None:  # only when the sub-question carries a resolvable date
                rankings[name] = temporal.search(window, constraints)
        else:
            raise ValueError(f"unknown channel {name!r}; expected one of {CHANNELS}")
    return rankings


def warm_start(
    query: str,
    *,
    sub_corpus: str | Sequence[str] | None = None,
    target_date: dt.date | DateWindow | None = None,
    exclude_chunks: Iterable[int] = (),
    exclude_documents: Iterable[int | str] = (),
    limit: int = 10,
    channels: Sequence[str] = DEFAULT_CHANNELS,
    document_ids: Sequence[int] | None = None,
    weights: Mapping[str, float] | None = None,
) -> list[FusedHit]:
    """Fuse bm25 + dense (+ temporal when dated) inside the target sub-corpus with RRF."""
    constraints = base_constraints(
        sub_corpus=sub_corpus, document_ids=document_ids, exclude_chunks=exclude_chunks,
        exclude_documents=exclude_documents, cap=max(limit, CHANNEL_POOL),
    )
    names = list(channels)
    if target_date is not None and "temporal" not in names:
        names.append("temporal")
    rankings = channel_rankings(query, constraints, channels=names, target_date=target_date)
    return rrf(rankings, weights=DEFAULT_WEIGHTS if weights is None else weights)[:limit]


def interleave(
    pools: Mapping[str, Sequence[FusedHit]], limit: int, overall: Sequence[FusedHit] = ()
) -> list[FusedHit]:
    """Fuse per-sub-corpus pools (and optionally a global pool) by RRF, keeping inner ranks."""
    rankings = {slug: fused_as_hits(pool, slug) for slug, pool in pools.items()}
    if overall:
        rankings["global"] = fused_as_hits(overall, "global")
    fused = rrf(rankings)
    inner = {item.document_key: item for pool in pools.values() for item in pool}
    inner.update({item.document_key: item for item in overall if item.document_key not in inner})
    result = []
    for outer in fused[:limit]:
        item = inner[outer.document_key]
        result.append(
            FusedHit(
                document_key=item.document_key, document_id=item.document_id,
                sub_corpus=item.sub_corpus, score=outer.score, rank=outer.rank,
                chunk_ids=dict(item.chunk_ids),
                channel_ranks={**item.channel_ranks, "sub_corpus_pool": item.rank},
            )
        )
    return result


def per_subcorpus_hybrid(
    query: str,
    *,
    sub_corpora: Sequence[str] | None = None,
    target_date: dt.date | DateWindow | None = None,
    exclude_chunks: Iterable[int] = (),
    exclude_documents: Iterable[int | str] = (),
    limit: int = 10,
    channels: Sequence[str] = DEFAULT_CHANNELS,
    document_ids: Sequence[int] | None = None,
    weights: Mapping[str, float] | None = None,
    include_global: bool = False,
) -> list[FusedHit]:
    """Build one warm-start pool per sub-corpus (constraint inside each channel), then fuse."""
    if sub_corpora is None:
        from archive.models import SubCorpus

        sub_corpora = list(SubCorpus.objects.values_list("slug", flat=True))
    exclude_documents = tuple(exclude_documents)
    exclude_chunks = tuple(exclude_chunks)
    pools = {
        slug: warm_start(
            query, sub_corpus=slug, target_date=target_date, exclude_chunks=exclude_chunks,
            exclude_documents=exclude_documents, limit=max(limit, CHANNEL_POOL),
            channels=channels, document_ids=document_ids, weights=weights,
        )
        for slug in sub_corpora
    }
    overall: list[FusedHit] = []
    if include_global:
        overall = warm_start(
            query, sub_corpus=list(sub_corpora), target_date=target_date,
            exclude_chunks=exclude_chunks, exclude_documents=exclude_documents,
            limit=max(limit, CHANNEL_POOL), channels=channels, document_ids=document_ids,
            weights=weights,
        )
    return interleave(pools, limit, overall)


@dataclass(frozen=True)
class SearchRequest:
    """One search as the agent or the search page asks for it."""

    channel: str
    query: str = ""
    window: DateWindow | None = None
    sub_corpus: str | Sequence[str] | None = None
    exclude_chunks: Sequence[int] = ()
    exclude_documents: Sequence[int | str] = ()
    cap: int = 10
    mode: str = "auto"  # substring only: auto | exact | fuzzy


@dataclass(frozen=True)
class SearchResult:
    """One document hit with the text of the chunk that matched."""

    hit: Hit
    chunk_text: str
    document_title: str
    document_date: dt.date | None
    channel_ranks: dict[str, int] = field(default_factory=dict)


def run_channel(request: SearchRequest) -> list[Hit]:
    """Run the request's channel and return pooled hits without texts."""
    constraints = base_constraints(
        sub_corpus=request.sub_corpus, exclude_chunks=request.exclude_chunks,
        exclude_documents=request.exclude_documents, cap=request.cap,
    )
    if request.channel == "temporal":
        if request.window is None:
            raise ValueError("a temporal search needs a date window")
        return temporal.search(request.window, constraints)
    if request.window is not None:
        constraints = constraints.with_(date_window=request.window)
    if not request.query.strip():
        return []
    if request.channel == "bm25":
        return bm25.search(request.query, constraints)
    if request.channel == "dense":
        return dense.search(request.query, constraints)
    if request.channel == "substring":
        return substring.search(request.query, constraints, mode=request.mode)
    raise ValueError(f"unknown channel {request.channel!r}; expected one of {CHANNELS}")


def search(request: SearchRequest) -> list[SearchResult]:
    """Run one channel search and attach each hit's chunk text and document metadata."""
    from retrieval.selectors import chunk_texts

    hits = run_channel(request)
    texts = chunk_texts([hit.chunk_id for hit in hits])
    return [
        SearchResult(hit=hit, chunk_text=texts[hit.chunk_id][0],
                     document_title=texts[hit.chunk_id][1], document_date=texts[hit.chunk_id][2],
                     channel_ranks={hit.channel: hit.rank})
        for hit in hits
    ]
