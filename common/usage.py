"""The token usage of model calls: one value type for a call, a run, a batch and their price."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class TokenUsage:
    """Count the tokens one model call, or a sum of calls, used; `TokenUsage()` is none.

    `cached_tokens` is the part of `input_tokens` the endpoint served from its cache. Stored
    rows, events and files keep the three counts as flat fields under these same names
    (`as_fields` / `from_fields`).
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0

    def __add__(self, other: TokenUsage) -> TokenUsage:
        return TokenUsage(self.input_tokens + other.input_tokens,
                          self.output_tokens + other.output_tokens,
                          self.cached_tokens + other.cached_tokens)

    @classmethod
    def total(cls, usages: Iterable[TokenUsage]) -> TokenUsage:
        """Add up the usage of several calls."""
        return sum(usages, cls())

    def as_fields(self) -> dict[str, int]:
        """Return the three counts under their stored names."""
        return {"input_tokens": self.input_tokens, "output_tokens": self.output_tokens,
                "cached_tokens": self.cached_tokens}

    @classmethod
    def from_fields(cls, data: Mapping[str, Any]) -> TokenUsage:
        """Read the counts back from stored flat fields; a missing (or null) count is 0."""
        return cls(int(data.get("input_tokens") or 0), int(data.get("output_tokens") or 0),
                   int(data.get("cached_tokens") or 0))
