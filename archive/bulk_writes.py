"""COPY writers for ingest: documents and chunks (with their vectors) in one stream per table."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from django.db import connection
from psycopg.types.json import Jsonb

from archive.chunking import TextChunk

DOCUMENT_COLUMNS = (
    "id", "sub_corpus_id", "external_id", "title", "publication", "date", "date_precision",
    "page", "url", "iiif_url", "metadata", "text", "content_hash", "ocr_confidence", "layout",
    "created_at", "updated_at",
)
CHUNK_COLUMNS = (
    "document_id", "ordinal", "text", "char_start", "char_end", "token_count", "content_hash",
    "embedding", "embedding_model", "ocr_confidence",
)


@dataclass(frozen=True)
class ChunkRow:
    """A chunk about to be written, with its text's hash, (maybe) its vector and OCR confidence."""

    document_id: int
    chunk: TextChunk
    content_hash: str
    vector: np.ndarray | None
    model: str
    ocr_confidence: float | None = None


def vector_literal(vector: np.ndarray) -> str:
    """Return pgvector's text form of ``vector``."""
    return "[" + ",".join(f"{x:.7g}" for x in np.asarray(vector, dtype=np.float32).tolist()) + "]"


def document_ids_allocate(count: int) -> list[int]:
    """Reserve ``count`` ids from the document table's sequence."""
    if count == 0:
        return []
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT nextval(pg_get_serial_sequence('archive_document', 'id')) "
            "FROM generate_series(1, %s)", [count],
        )
        return [row[0] for row in cursor.fetchall()]


def documents_copy(rows: Iterable[dict]) -> int:
    """COPY document rows (dicts keyed by ``DOCUMENT_COLUMNS``, ids included); return the count."""
    now = dt.datetime.now(dt.UTC)
    written = 0
    with connection.cursor() as cursor, cursor.copy(
        f"COPY archive_document ({', '.join(DOCUMENT_COLUMNS)}) FROM STDIN"
    ) as copy:
        for row in rows:
            layout = row.get("layout")
            row = {**row, "metadata": Jsonb(row["metadata"]), "created_at": now,
                   "updated_at": now, "ocr_confidence": row.get("ocr_confidence"),
                   "layout": Jsonb(layout) if layout is not None else None}
            copy.write_row([row[name] for name in DOCUMENT_COLUMNS])
            written += 1
    return written


def chunks_copy(rows: Sequence[ChunkRow]) -> int:
    """COPY chunk rows with their vectors (NULL when not embedded); return the count."""
    if not rows:
        return 0
    with connection.cursor() as cursor, cursor.copy(
        f"COPY archive_chunk ({', '.join(CHUNK_COLUMNS)}) FROM STDIN"
    ) as copy:
        for row in rows:
            c = row.chunk
            copy.write_row([
                row.document_id, c.ordinal, c.text, c.char_start, c.char_end, c.token_count,
                row.content_hash,
                vector_literal(row.vector) if row.vector is not None else None,
                row.model if row.vector is not None else "", row.ocr_confidence,
            ])
    return len(rows)
