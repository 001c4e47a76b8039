"""Any OpenAI-compatible /v1/embeddings endpoint, through the official ``openai`` client."""

from __future__ import annotations

from typing import Any

import numpy as np
from openai import OpenAI

from archive.embeddings.base import WindowedProvider


class OpenAIProvider(WindowedProvider):
    """Embed through an OpenAI-compatible endpoint, in batches, with the client's retries.

    When ``dimensions`` is set it is sent as the endpoint's ``dimensions`` parameter (models such
    as text-embedding-3 shorten their vectors natively); whatever comes back is then zero-padded
    or truncated to 512 and renormalised. Passages go whole by default: endpoint models accept
    thousands of tokens, more than a 1,000-word chunk.
    """

    def __init__(
        self, *, base_url: str, model: str, api_key: str = "", dimensions: int | None = None,
        batch_size: int = 64, max_retries: int = 4, timeout: float = 60.0,
        query_prefix: str = "", passage_prefix: str = "", window_words: int | None = None,
    ) -> None:
        super().__init__(window_words=window_words)
        self.client = OpenAI(
            base_url=base_url, api_key=api_key or "none", max_retries=max_retries,
            timeout=timeout,
        )
        self.model = model
        self.dimensions = dimensions or None
        self.batch_size = batch_size
        self.query_prefix = query_prefix
        self.passage_prefix = passage_prefix
        self.name = f"openai:{model}" + (f"@{self.dimensions}" if self.dimensions else "")

    def _encode(self, texts: list[str], *, is_query: bool) -> np.ndarray:
        prefix = self.query_prefix if is_query else self.passage_prefix
        rows: list[list[float]] = []
        for i in range(0, len(texts), self.batch_size):
            batch = [prefix + t for t in texts[i : i + self.batch_size]]
            extra: dict[str, Any] = {"dimensions": self.dimensions} if self.dimensions else {}
            response = self.client.embeddings.create(model=self.model, input=batch, **extra)
            # The API may answer out of order; ``index`` says where each vector belongs.
            ordered = sorted(response.data, key=lambda item: item.index)
            if len(ordered) != len(batch):
                raise RuntimeError(
                    f"embedding endpoint returned {len(ordered)} vectors for {len(batch)} inputs"
                )
            rows.extend(item.embedding for item in ordered)
        return np.asarray(rows, dtype=np.float32)
