"""The reference BM25 (bm25s; accent folding, French stop words) over the same chunks.

bm25s is an evaluation baseline, installed from requirements-dev.lock, not in the runtime image.
"""

from __future__ import annotations

import time

import numpy as np

from archive.models import Chunk
from common.document_keys import document_key
from common.text import lower_without_accents
from measurement.evaluation.records import EvalQuestion, SystemRun


class Bm25sReference:
    """Score every chunk with bm25s, keep each document's best chunk."""

    def __init__(self, config):
        try:
            import bm25s  # deferred: optional, installed from requirements-dev.lock only
        except ImportError as exc:
            raise RuntimeError(
                "the bm25s-reference system needs bm25s: install requirements-dev.lock"
            ) from exc

        rows = Chunk.objects.all()
        if config.sub_corpora is not None:
            rows = rows.filter(document__sub_corpus__slug__in=config.sub_corpora)
        if config.document_ids is not None:
            rows = rows.filter(document_id__in=config.document_ids)
        data = list(rows.values_list("text", "document__sub_corpus__slug",
                                     "document__external_id").order_by("id"))
        self._keys = np.array([document_key(slug, ext) for _, slug, ext in data])
        self._depth = config.depth
        self._bm25s = bm25s
        folded = [lower_without_accents(text) for text, _, _ in data]
        tokens = bm25s.tokenize(folded, stopwords="fr", show_progress=False)
        self._retriever = bm25s.BM25()
        self._retriever.index(tokens, show_progress=False)
        self._n = len(data)

    def __call__(self, question: EvalQuestion):
        start = time.perf_counter()
        folded = [lower_without_accents(question.question)]
        tokens = self._bm25s.tokenize(folded, stopwords="fr", show_progress=False)
        query = _query_tokens(tokens)
        scores = self._retriever.get_scores(query) if query else np.zeros(self._n)
        order = np.argsort(-scores, kind="stable")
        ranked = list(dict.fromkeys(self._keys[i] for i in order if scores[i] > 0))
        return SystemRun(ranked[: self._depth], time.perf_counter() - start)


def _query_tokens(tokenized) -> list[str]:
    inverse = {index: token for token, index in tokenized.vocab.items()}
    return [inverse[i] for i in tokenized.ids[0]]
