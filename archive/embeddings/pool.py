"""Compute passage vectors in worker processes, so writing never waits on the model."""

from __future__ import annotations

import multiprocessing
import pickle
from concurrent.futures import Executor, Future, ProcessPoolExecutor

import numpy as np

from archive.embedding_worker import worker_embed, worker_start
from archive.embeddings.base import EmbeddingProvider
from archive.models import EMBEDDING_DIMENSIONS


class EmbeddingPool:
    """Embed passages with ``provider``: in ``workers`` processes, or in this one when 0."""

    def __init__(self, provider: EmbeddingProvider, workers: int = 0) -> None:
        self.provider = provider
        self.workers = workers
        self._executor: Executor | None = None
        if workers > 0:
            # Spawned, not forked: a forked child would share this process's database socket.
            self._executor = ProcessPoolExecutor(
                max_workers=workers, mp_context=multiprocessing.get_context("spawn"),
                initializer=worker_start, initargs=(pickle.dumps(provider),),
            )

    def submit(self, texts: list[str], *, piece: int = 64) -> list[Future[np.ndarray]]:
        """Start embedding ``texts`` in pieces of ``piece``; one future per piece, in order."""
        futures: list[Future[np.ndarray]] = []
        for i in range(0, len(texts), piece):
            part = texts[i : i + piece]
            if self._executor is None:
                done: Future[np.ndarray] = Future()
                done.set_result(np.asarray(self.provider.embed_passages(part), dtype=np.float32))
                futures.append(done)
            else:
                futures.append(self._executor.submit(worker_embed, part))
        return futures

    @staticmethod
    def gather(futures: list[Future[np.ndarray]]) -> np.ndarray:
        """Wait for ``futures`` and stack their vectors."""
        parts = [f.result() for f in futures]
        if not parts:
            return np.zeros((0, EMBEDDING_DIMENSIONS), dtype=np.float32)
        return np.concatenate(parts)

    def close(self) -> None:
        """Stop the worker processes."""
        if self._executor is not None:
            self._executor.shutdown(cancel_futures=True)
            self._executor = None

    def __enter__(self) -> EmbeddingPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
