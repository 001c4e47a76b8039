"""The retrieval channels behind one interface, by name.

Each channel is a module here with a class offering `name` and `search(SearchRequest) ->
list[Hit]` (see `base.Channel`); the registry below holds one instance of each.
"""

from __future__ import annotations

from retrieval.channels.base import Channel
from retrieval.channels.bm25 import Bm25Channel
from retrieval.channels.dense import DenseChannel
from retrieval.channels.substring import SubstringChannel
from retrieval.channels.temporal import TemporalChannel

__all__ = ["Channel", "get", "names"]

_REGISTRY: dict[str, Channel] = {
    channel.name: channel
    for channel in (Bm25Channel(), DenseChannel(), TemporalChannel(), SubstringChannel())
}


def get(name: str) -> Channel:
    """Return the channel registered under a name; an unknown name raises ValueError."""
    try:
        return _REGISTRY[name]
    except KeyError:
        raise ValueError(f"unknown channel {name!r}; expected one of {names()}") from None


def names() -> tuple[str, ...]:
    """Return the registered channel names."""
    return tuple(_REGISTRY)
