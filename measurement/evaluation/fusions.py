"""Fusions measured in the evaluation only: one warm-start pool per sub-corpus, interleaved."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from archive.models import SubCorpus
from common.search import Hit, SearchRequest
from retrieval.fusion import rrf
from retrieval.warm_start import CHANNEL_POOL, DEFAULT_CHANNELS, warm_start


def interleave(
    pools: Mapping[str, Sequence[Hit]], limit: int, overall: Sequence[Hit] = ()
) -> list[Hit]:
    """Fuse per-sub-corpus pools (and optionally a global pool) by RRF, keeping inner ranks.

    Each returned hit is the one of its own pool, with the outer score and rank; its
    `channel_ranks` gain "sub_corpus_pool", its rank inside that pool.
    """
    rankings: dict[str, Sequence[Hit]] = dict(pools)
    if overall:
        rankings["global"] = overall
    fused = rrf(rankings)
    inner = {item.document_key: item for pool in pools.values() for item in pool}
    inner.update({item.document_key: item for item in overall if item.document_key not in inner})
    result = []
    for outer in fused[:limit]:
        item = inner[outer.document_key]
        result.append(item.with_(
            score=outer.score, rank=outer.rank,
            channel_ranks={**item.channel_ranks, "sub_corpus_pool": item.rank},
        ))
    return result


def per_subcorpus_hybrid(
    request: SearchRequest,
    *,
    sub_corpora: Sequence[str] | None = None,
    channels: Sequence[str] = DEFAULT_CHANNELS,
    weights: Mapping[str, float] | None = None,
    include_global: bool = False,
) -> list[Hit]:
    """Run one warm start per sub-corpus (restricted inside each channel), then interleave them.

    `sub_corpora` defaults to every sub-corpus of the archive; `include_global` adds a warm
    start over all of them as one more pool.
    """
    if sub_corpora is None:
        sub_corpora = list(SubCorpus.objects.values_list("slug", flat=True))
    pool = request.with_(limit=max(request.limit, CHANNEL_POOL))
    pools = {
        slug: warm_start(pool.with_(sub_corpora=(slug,)), channels=channels, weights=weights)
        for slug in sub_corpora
    }
    overall: list[Hit] = []
    if include_global:
        overall = warm_start(pool.with_(sub_corpora=tuple(sub_corpora)), channels=channels,
                             weights=weights)
    return interleave(pools, request.limit, overall)
