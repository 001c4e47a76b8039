"""Per-document max-pooling and reciprocal-rank fusion (pure functions, no Django)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from common.search import Hit

RRF_K = 60


def ranked(hits: Iterable[Hit]) -> list[Hit]:
    """Number hits from 1 in the given order; each records its own channel's rank and chunk."""
    return [
        hit.with_(rank=rank, channel_ranks={hit.channel: rank},
                  channel_chunks={hit.channel: hit.chunk_id})
        for rank, hit in enumerate(hits, start=1)
    ]


def max_pool(hits: Iterable[Hit], cap: int | None = None) -> list[Hit]:
    """Keep each document once, by its best-scoring chunk, and rank from 1."""
    best: dict[str, Hit] = {}
    for hit in hits:
        current = best.get(hit.document_key)
        if current is None or hit.score > current.score:
            best[hit.document_key] = hit
    ordered = sorted(best.values(), key=lambda h: (-h.score, h.document_key))
    if cap is not None:
        ordered = ordered[:cap]
    return ranked(ordered)


def rrf(
    rankings: Mapping[str, Sequence[Hit]] | Sequence[Sequence[Hit]],
    k: int = RRF_K,
    weights: Mapping[str, float] | None = None,
    *,
    channel: str = "rrf",
) -> list[Hit]:
    """Fuse rankings by reciprocal rank: score(d) = sum over rankings of w / (k + rank).

    Rankings are named by their key (or, for a plain list, by their hits' channel); `weights`
    maps a name to its weight (missing = 1.0). Ties go to the document with the best single
    rank, then to the smaller key. A fused hit keeps the rank and the chunk each ranking gave
    it, and is represented by the chunk of the ranking that placed it highest.
    """
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
    first: dict[str, Hit] = {}
    chunks: dict[str, dict[str, int]] = {}
    ranks: dict[str, dict[str, int]] = {}
    for name, ranking in named:
        weight = 1.0 if weights is None else weights.get(name, 1.0)
        seen: set[str] = set()
        for position, hit in enumerate(ranking, start=1):
            key = hit.document_key
            if key in seen:  # a ranking counts each document once
                continue
            seen.add(key)
            scores[key] = scores.get(key, 0.0) + weight / (k + position)
            first.setdefault(key, hit)
            chunks.setdefault(key, {})[name] = hit.chunk_id
            ranks.setdefault(key, {})[name] = position
    ordered = sorted(scores, key=lambda key: (-scores[key], min(ranks[key].values()), key))
    return [
        Hit(
            chunk_id=chunks[key][_top_ranking(ranks[key])],
            document_id=first[key].document_id,
            document_key=key,
            sub_corpus=first[key].sub_corpus,
            score=scores[key],
            rank=rank,
            channel=channel,
            channel_ranks=ranks[key],
            channel_chunks=chunks[key],
        )
        for rank, key in enumerate(ordered, start=1)
    ]


def _top_ranking(ranks: Mapping[str, int]) -> str:
    """Return the ranking that placed a document highest (ties: alphabetical order)."""
    return min(ranks, key=lambda name: (ranks[name], name))
