"""Chunk and hash documents in a worker process while earlier batches are written.

Chunking is pure Python and was half of a large ingest's time in its one process. A worker
receives texts and sends back only spans and hashes (no chunk text crosses the process
boundary twice); the chunks are cut from the texts here. Small ingests chunk in this process:
starting a worker costs more than it saves.
"""

from __future__ import annotations

import multiprocessing
from concurrent.futures import Executor, Future, ProcessPoolExecutor

from archive.chunking import TextChunk, chunk_text, content_sha256

# An ingest of fewer records chunks in its own process.
POOL_MIN_RECORDS = 2_000

Span = tuple[int, int, int, str]  # char_start, char_end, token_count, content hash


def chunk_spans(texts: list[str]) -> list[list[Span]]:
    """Chunk each text; return its chunks' spans, token counts and content hashes."""
    return [[(c.char_start, c.char_end, c.token_count, content_sha256(c.text))
             for c in chunk_text(text)] for text in texts]


def chunks_of(text: str, spans: list[Span]) -> tuple[list[TextChunk], list[str]]:
    """Rebuild the chunks of ``text`` from its spans; return them and their hashes."""
    chunks = [TextChunk(n, text[start:end], start, end, tokens)
              for n, (start, end, tokens, _) in enumerate(spans)]
    return chunks, [span[3] for span in spans]


class ChunkPool:
    """Chunk texts in ``workers`` processes, or in this one when 0."""

    def __init__(self, workers: int = 0) -> None:
        self._executor: Executor | None = None
        if workers > 0:
            # Spawned: chunking needs no database, and a fork would share this one's socket.
            self._executor = ProcessPoolExecutor(
                max_workers=workers, mp_context=multiprocessing.get_context("spawn"))

    @property
    def parallel(self) -> bool:
        """Whether chunking runs in other processes (then batches are prepared ahead)."""
        return self._executor is not None

    def submit(self, texts: list[str]) -> Future[list[list[Span]]]:
        """Start chunking ``texts``; the future gives each text's spans, in order."""
        if self._executor is not None:
            return self._executor.submit(chunk_spans, texts)
        done: Future[list[list[Span]]] = Future()
        done.set_result(chunk_spans(texts))
        return done

    def close(self) -> None:
        """Stop the worker processes."""
        if self._executor is not None:
            self._executor.shutdown(cancel_futures=True)
            self._executor = None
