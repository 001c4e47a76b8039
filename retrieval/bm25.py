"""BM25 channel: a whoosh index of chunks, rebuilt from Postgres whenever the corpus changes."""

from __future__ import annotations

import fcntl
import shutil
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.db import connection
from whoosh import index as whoosh_index
from whoosh import query as wq
from whoosh.fields import ID, NUMERIC, TEXT, Schema
from whoosh.scoring import BM25F

from archive.models import Chunk, CorpusRevision, SubCorpus
from retrieval.analysis import DEFAULT_OPTIONS, AnalyzerOptions, build_analyzer, field_language
from retrieval.fusion import max_pool
from retrieval.sql import chunk_fetch_limit
from retrieval.types import Constraints, Hit

CHANNEL = "bm25"
READY_MARKER = "READY"
# Measured on the dev questions: stronger length normalisation helps the short press articles
# against long debate sections (see docs/retrieval-evaluation.md).
K1 = 1.5
B = 0.9
KEEP_REVISIONS = 2


@dataclass
class _OpenIndex:
    path: Path
    index: whoosh_index.Index
    searchers: dict[tuple[float, float], object]
    fields: dict[str, object]  # text field name -> analyzer
    lock: threading.Lock


_cache: dict[tuple[str, str], _OpenIndex] = {}
_cache_lock = threading.Lock()


def index_root() -> Path:
    """Return the directory holding this database's BM25 indexes."""
    return Path(settings.TRACE_BM25_DIR) / connection.settings_dict["NAME"]


def index_path(revision: int, options: AnalyzerOptions = DEFAULT_OPTIONS) -> Path:
    """Return the directory of the index for one corpus revision and analyzer."""
    return index_root() / f"rev-{revision}-{options.signature()}"


def _languages() -> list[str]:
    codes = {field_language(lang) for lang in SubCorpus.objects.values_list("language", flat=True)}
    return sorted(codes) or ["fr"]


def _schema(languages: list[str], options: AnalyzerOptions) -> Schema:
    fields = {
        "chunk_id": ID(stored=True, unique=True),
        "document_id": ID(stored=True),
        "document_key": ID(stored=True),
        "sub_corpus": ID(stored=True),
        "day": NUMERIC(int, bits=32, stored=False, signed=True),
    }
    for language in languages:
        fields[f"text_{language}"] = TEXT(analyzer=build_analyzer(language, options), stored=False)
    return Schema(**fields)


@contextmanager
def _build_lock(root: Path):
    root.mkdir(parents=True, exist_ok=True)
    with open(root / ".lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def build_index(revision: int, options: AnalyzerOptions = DEFAULT_OPTIONS) -> Path:
    """Build the index for a revision unless present; return its directory."""
    target = index_path(revision, options)
    if (target / READY_MARKER).exists():
        return target
    with _build_lock(index_root()):
        if (target / READY_MARKER).exists():  # another process built it while we waited
            return target
        staging = target.with_name(target.name + ".building")
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir(parents=True)
        languages = _languages()
        ix = whoosh_index.create_in(staging, _schema(languages, options))
        writer = ix.writer(limitmb=256)
        rows = Chunk.objects.values_list(
            "id", "document_id", "document__external_id", "document__sub_corpus__slug",
            "document__sub_corpus__language", "document__date", "text",
        ).order_by("id")
        for chunk_id, doc_id, external_id, slug, language, date, text in rows.iterator(2000):
            code = field_language(language)
            doc = {
                "chunk_id": str(chunk_id),
                "document_id": str(doc_id),
                "document_key": f"{slug}:{external_id}",
                "sub_corpus": slug,
                f"text_{code if code in languages else languages[0]}": text,
            }
            if date is not None:
                doc["day"] = date.toordinal()
            writer.add_document(**doc)
        writer.commit()
        ix.close()
        (staging / READY_MARKER).write_text(str(revision))
        shutil.rmtree(target, ignore_errors=True)
        staging.rename(target)
        _prune(index_root(), options, keep=target)
    return target


def _prune(root: Path, options: AnalyzerOptions, keep: Path) -> None:
    # Keep the newest few so a process still reading an older index is not cut off mid-query.
    suffix = f"-{options.signature()}"
    old = sorted(
        (p for p in root.glob(f"rev-*{suffix}") if p != keep and p.name.endswith(suffix)),
        key=lambda p: int(p.name.split("-")[1]),
    )
    for path in old[: max(0, len(old) - (KEEP_REVISIONS - 1))]:
        shutil.rmtree(path, ignore_errors=True)


def _open(options: AnalyzerOptions) -> _OpenIndex:
    revision = CorpusRevision.current()
    path = index_path(revision, options)
    key = (str(path), options.signature())
    with _cache_lock:
        cached = _cache.get(key)
        if cached is not None:
            return cached
        build_index(revision, options)
        ix = whoosh_index.open_dir(path)
        fields = {
            name: ix.schema[name].analyzer for name in ix.schema.names() if name.startswith("text_")
        }
        opened = _OpenIndex(path, ix, {}, fields, threading.Lock())
        for stale in [k for k in _cache if k[1] == key[1]]:
            _close(_cache.pop(stale))
        _cache[key] = opened
        return opened


def query_terms(text: str, options: AnalyzerOptions = DEFAULT_OPTIONS) -> dict[str, list[str]]:
    """Return the analyzed query terms per text field of the current index."""
    opened = _open(options)
    return {
        name: list(dict.fromkeys(t.text for t in analyzer(text)))
        for name, analyzer in opened.fields.items()
    }


def _filter(constraints: Constraints):
    parts = []
    if constraints.sub_corpora is not None:
        parts.append(wq.Or([wq.Term("sub_corpus", s) for s in constraints.sub_corpora]))
    if constraints.document_ids is not None:
        parts.append(wq.Or([wq.Term("document_id", str(d)) for d in constraints.document_ids]))
    if constraints.date_window is not None:
        parts.append(
            wq.NumericRange(
                "day",
                constraints.date_window.start.toordinal(),
                constraints.date_window.end.toordinal(),
            )
        )
    if not parts:
        return None
    return parts[0] if len(parts) == 1 else wq.And(parts)


def _mask(constraints: Constraints):
    terms = [wq.Term("chunk_id", str(c)) for c in constraints.exclude_chunk_ids]
    terms += [wq.Term("document_id", str(d)) for d in constraints.exclude_document_ids]
    terms += [wq.Term("document_key", k) for k in constraints.exclude_document_keys]
    return wq.Or(terms) if terms else None


def _close(opened: _OpenIndex) -> None:
    for searcher in opened.searchers.values():
        searcher.close()
    opened.searchers.clear()


def search(
    query: str,
    constraints: Constraints,
    *,
    options: AnalyzerOptions = DEFAULT_OPTIONS,
    k1: float = K1,
    b: float = B,
) -> list[Hit]:
    """Return up to `cap` documents ranked by their best chunk's BM25 score."""
    if (constraints.sub_corpora is not None and not constraints.sub_corpora) or (
        constraints.document_ids is not None and not constraints.document_ids
    ):
        return []
    opened = _open(options)
    clauses = []
    for name, analyzer in opened.fields.items():
        terms = dict.fromkeys(token.text for token in analyzer(query))
        clauses += [wq.Term(name, term) for term in terms]
    if not clauses:
        return []
    whoosh_query = wq.Or(clauses)
    filter_query, mask_query = _filter(constraints), _mask(constraints)
    limit = chunk_fetch_limit(constraints.cap)
    with opened.lock:
        searcher = opened.searchers.get((k1, b))
        if searcher is None:
            searcher = opened.index.searcher(weighting=BM25F(B=b, K1=k1))
            opened.searchers[(k1, b)] = searcher
        while True:
            results = searcher.search(
                whoosh_query, filter=filter_query, mask=mask_query, limit=limit
            )
            hits = [
                Hit(
                    chunk_id=int(r["chunk_id"]),
                    document_id=int(r["document_id"]),
                    document_key=r["document_key"],
                    sub_corpus=r["sub_corpus"],
                    score=float(r.score),
                    rank=0,
                    channel=CHANNEL,
                )
                for r in results
            ]
            pooled = max_pool(hits, cap=constraints.cap)
            if len(pooled) >= constraints.cap or len(hits) < limit:
                return pooled
            limit *= 4


def clear_cache() -> None:
    """Close every open index of this process (tests and index maintenance)."""
    with _cache_lock:
        for opened in _cache.values():
            _close(opened)
        _cache.clear()
