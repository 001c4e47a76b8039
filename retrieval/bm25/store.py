"""Where the BM25 index lives, which engine carries it, and the one open index of each process."""

from __future__ import annotations

import threading
from pathlib import Path

from django.conf import settings
from django.db import connection

from retrieval.analysis import DEFAULT_OPTIONS, AnalyzerOptions
from retrieval.bm25.base import TextIndex
from retrieval.bm25.tantivy_engine import TantivyIndex
from retrieval.bm25.whoosh_engine import WhooshIndex

ENGINES = ("whoosh", "tantivy")
# Bumped when the index's fields or the way texts are turned into terms change: a new version
# lives in a new directory, built in full once; every other change is applied per document.
SCHEMA_VERSION = 4
# Measured on the dev questions (see docs/retrieval-evaluation.md): stronger length
# normalisation helps the short press articles against long debate sections (Tantivy's
# candidates are rescored with them).
K1 = 1.5
B = 0.9

_open: dict[Path, TextIndex] = {}
_open_lock = threading.Lock()


def engine_name() -> str:
    """Return the configured engine (TRACE_BM25_ENGINE), refusing an unknown one."""
    name = getattr(settings, "TRACE_BM25_ENGINE", "tantivy")
    if name not in ENGINES:
        raise ValueError(f"TRACE_BM25_ENGINE must be one of {ENGINES}, not {name!r}")
    return name


def index_root() -> Path:
    """Return the directory holding this database's BM25 indexes."""
    return Path(settings.TRACE_BM25_DIR) / connection.settings_dict["NAME"]


def index_path(options: AnalyzerOptions = DEFAULT_OPTIONS, engine: str | None = None) -> Path:
    """Return the index directory: engine, schema version and analyzer are in its name."""
    return index_root() / f"{engine or engine_name()}-v{SCHEMA_VERSION}-{options.signature()}"


def exists(path: Path, engine: str) -> bool:
    """Tell whether a committed index of ``engine`` is present at ``path``."""
    return (TantivyIndex if engine == "tantivy" else WhooshIndex).exists(path)


def create(path: Path, engine: str, options: AnalyzerOptions) -> TextIndex:
    """Create an empty index of ``engine`` at ``path``."""
    if engine == "tantivy":
        return TantivyIndex.create(path, options, K1, B)
    return WhooshIndex.create(path, options, K1, B)


def opened(options: AnalyzerOptions = DEFAULT_OPTIONS, engine: str | None = None,
           k1: float = K1, b: float = B) -> TextIndex:
    """Return this process's handle on an index (it opens files lazily, builds nothing)."""
    engine = engine or engine_name()
    path = index_path(options, engine)
    key = path if (k1, b) == (K1, B) else path / f"k1={k1},b={b}"
    with _open_lock:
        handle = _open.get(key)
        if handle is None:
            handle = (TantivyIndex(path, options, k1, b) if engine == "tantivy"
                      else WhooshIndex(path, options, k1, b))
            _open[key] = handle
        return handle


def close_all() -> None:
    """Close every index handle of this process (tests and index maintenance)."""
    with _open_lock:
        for handle in _open.values():
            handle.close()
        _open.clear()
