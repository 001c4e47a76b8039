"""The warm start: the text channels (and the temporal one for a dated request) fused by RRF."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from common.search import Hit, SearchRequest
from retrieval import channels as registry
from retrieval.fusion import rrf

# Each channel contributes this many documents to a fusion, whatever the final limit.
CHANNEL_POOL = 50
DEFAULT_CHANNELS = ("bm25", "dense")
# RRF weight per channel (missing = 1.0). The dense channel (USE on long OCR chunks) is much
# weaker than BM25 here; at full weight it pulls fusion below BM25 alone, at 0.1 it breaks
# BM25's ties and adds its unique finds (measured on the dev questions; see the docs).
DEFAULT_WEIGHTS: Mapping[str, float] = {"dense": 0.1}


def run_channels(request: SearchRequest, names: Sequence[str]) -> dict[str, list[Hit]]:
    """Run each named channel on the same request and return its ranking, by channel name."""
    return {name: registry.get(name).search(request.with_(channel=name)) for name in names}


def warm_start_rankings(
    request: SearchRequest, channels: Sequence[str] = DEFAULT_CHANNELS
) -> dict[str, list[Hit]]:
    """Run the warm start's channels, each returning `request.limit` documents.

    The request's window is a target date, not a filter: it drives the temporal channel (added
    when missing) and no other; without a window the temporal channel is left out.
    """
    names = list(channels)
    if request.window is not None and "temporal" not in names:
        names.append("temporal")
    undated = request.with_(window=None)
    return {
        name: registry.get(name).search(
            (request if name == "temporal" else undated).with_(channel=name)
        )
        for name in names
        if name != "temporal" or request.window is not None
    }


def warm_start(
    request: SearchRequest,
    *,
    channels: Sequence[str] = DEFAULT_CHANNELS,
    weights: Mapping[str, float] | None = None,
) -> list[Hit]:
    """Return up to `request.limit` documents fused by weighted RRF over the warm-start channels.

    Every channel applies the request's restrictions inside its own query and contributes at
    least CHANNEL_POOL documents. A hit carries the rank and the chunk each channel gave it, and
    the chunk of the channel that ranked it highest. `weights` defaults to DEFAULT_WEIGHTS.
    """
    pool = request.with_(limit=max(request.limit, CHANNEL_POOL))
    rankings = warm_start_rankings(pool, channels)
    fused = rrf(rankings, weights=DEFAULT_WEIGHTS if weights is None else weights,
                channel=request.channel)
    return fused[: request.limit]
