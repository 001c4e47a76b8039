"""Drop and rebuild the HNSW index on chunk vectors around a bulk load (faster than row by row)."""

from __future__ import annotations

import time

from django.db import connection

from archive.models import Chunk

INDEX_NAME = "chunk_embedding_hnsw"


def _index_sql() -> str:
    index = next(i for i in Chunk._meta.indexes if i.name == INDEX_NAME)
    with connection.schema_editor() as editor:
        return str(index.create_sql(Chunk, editor)).replace(
            "CREATE INDEX", "CREATE INDEX IF NOT EXISTS", 1)


def vector_index_exists() -> bool:
    """Say whether the HNSW index on chunk vectors is present."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_indexes WHERE indexname = %s", [INDEX_NAME])
        return cursor.fetchone() is not None


def vector_index_drop() -> None:
    """Drop the HNSW index, so a bulk load does not update the graph row by row."""
    with connection.cursor() as cursor:
        cursor.execute(f"DROP INDEX IF EXISTS {INDEX_NAME}")


def vector_index_build(*, maintenance_work_mem: str = "2GB", parallel_workers: int = 1) -> float:
    """Build the HNSW index (as the model defines it) if missing; return the seconds it took.

    The graph is built in memory when ``maintenance_work_mem`` holds it (pgvector warns and
    slows down otherwise).
    """
    started = time.perf_counter()
    sql = _index_sql()
    with connection.cursor() as cursor:
        cursor.execute("SELECT set_config('maintenance_work_mem', %s, false)",
                       [maintenance_work_mem])
        cursor.execute(f"SET max_parallel_maintenance_workers = {int(parallel_workers)}")
        cursor.execute(sql)
        cursor.execute("RESET maintenance_work_mem")
        cursor.execute("RESET max_parallel_maintenance_workers")
    return time.perf_counter() - started
