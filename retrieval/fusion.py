"""Per-document max-pooling and reciprocal-rank fusion (pure functions, no Django)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace

from retrieval.types import FusedHit, Hit

RRF_K = 60


def max_pool(hits: Iterable[Hit], cap: int | None = None) -> list[Hit]:
    """Keep each document once, by its best-scoring chunk, and re-rank from 1."""
    best: dict[str, Hit] = {}
    for hit in hits:
        current = best.get(hit.document_key)
        if current is None or hit.score > current.score:
            best[hit.document_key] = hit
    ordered = sorted(best.values(), key=lambda h: (-h.score, h.document_key))
    if cap is not None:
        ordered = ordered[:cap]
    return [replace(hit, rank=index) for index, hit in enumerate(ordered, start=1)]


def rrf(
    rankings: Mapping[str, Sequence[Hit]] | Sequence[Sequence[Hit]],
    k: int = RRF_K,
    weights: Mapping[str, float] | None = None,
) -> list[FusedHit]:
    """Fuse rankings by reciprocal rank: score(d) = sum over rankings of w / (k + rank)."""
    if isinstance(rankings, Mapping):
        named = list(rankings.items())
    else:
        named = []
        for index, ranking in enumerate(rankings):
            name = ranking[0].channel if ranking else f"ranking{index}"
            if any(name == existing for existing, _ in named):
                name = f"{name}#{index}"
            named.append((name, ranking))
    scores: dict[str, float] = {}
    meta: dict[str, tuple[int, str]] = {}
    chunks: dict[str, dict[str, int]] = {}
    ranks: dict[str, dict[str, int]] = {}
    for name, ranking in named:
        weight = 1.0 if weights is None else weights.get(name, 1.0)
        seen: set[str] = set()
        for position, hit in enumerate(ranking, start=1):
            if hit.document_key in seen:  # a ranking counts each document once
                continue
            seen.add(hit.document_key)
            scores[hit.document_key] = scores.get(hit.document_key, 0.0) + weight / (k + position)
            meta.setdefault(hit.document_key, (hit.document_id, hit.sub_corpus))
            chunks.setdefault(hit.document_key, {})[name] = hit.chunk_id
            ranks.setdefault(hit.document_key, {})[name] = position
    ordered = sorted(scores, key=lambda key: (-scores[key], min(ranks[key].values()), key))
    return [
        FusedHit(
            document_key=key,
            document_id=meta[key][0],
            sub_corpus=meta[key][1],
            score=scores[key],
            rank=rank,
            chunk_ids=chunks[key],
            channel_ranks=ranks[key],
        )
        for rank, key in enumerate(ordered, start=1)
    ]


def fused_as_hits(fused: Sequence[FusedHit], channel: str) -> list[Hit]:
    """Present a fused list as a plain ranking so it can be fused again."""
    return [
        Hit(
            chunk_id=item.best_chunk_id,
            document_id=item.document_id,
            document_key=item.document_key,
            sub_corpus=item.sub_corpus,
            score=item.score,
            rank=item.rank,
            channel=channel,
        )
        for item in fused
    ]
