"""BM25 channel: a whoosh index of chunks, rebuilt from Postgres whenever the corpus changes."""

from __future__ import annotations

import shutil
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import connection
from whoosh import index as whoosh_index
from whoosh import query as wq
from whoosh.fields import ID, NUMERIC, TEXT, Schema
from whoosh.scoring import BM25F

from archive.models import Chunk, CorpusRevision, SubCorpus
from common.locks import file_lock
from common.search import Hit, SearchRequest
from retrieval.analysis import DEFAULT_OPTIONS, AnalyzerOptions, build_analyzer, field_language
from retrieval.channels.base import best_chunk_per_document

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
    searchers: dict[tuple[float, float], Any]  # whoosh Searcher per (k1, b)
    fields: dict[str, Any]  # text field name -> whoosh analyzer
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


def build_index(revision: int, options: AnalyzerOptions = DEFAULT_OPTIONS) -> Path:
    """Build the index for a revision unless present; return its directory."""
    target = index_path(revision, options)
    if (target / READY_MARKER).exists():
        return target
    with file_lock(index_root() / ".lock"):
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
            doc: dict[str, str | int] = {
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


def _filter(request: SearchRequest):
    parts = []
    if request.sub_corpora is not None:
        parts.append(wq.Or([wq.Term("sub_corpus", s) for s in request.sub_corpora]))
    if request.document_ids is not None:
        parts.append(wq.Or([wq.Term("document_id", str(d)) for d in request.document_ids]))
    if request.window is not None:
        parts.append(
            wq.NumericRange("day", request.window.start.toordinal(), request.window.end.toordinal())
        )
    if not parts:
        return None
    return parts[0] if len(parts) == 1 else wq.And(parts)


def _mask(request: SearchRequest):
    terms = [wq.Term("chunk_id", str(c)) for c in request.exclude_chunk_ids]
    terms += [wq.Term("document_key", k) for k in request.exclude_document_keys]
    return wq.Or(terms) if terms else None


def _close(opened: _OpenIndex) -> None:
    for searcher in opened.searchers.values():
        searcher.close()
    opened.searchers.clear()


@dataclass(frozen=True)
class Bm25Channel:
    """Rank documents by their best chunk's BM25 score; the date window is a filter."""

    options: AnalyzerOptions = DEFAULT_OPTIONS
    k1: float = K1
    b: float = B
    name: str = CHANNEL

    def search(self, request: SearchRequest) -> list[Hit]:
        """Return up to `request.limit` documents ranked by their best chunk's BM25 score."""
        if (request.sub_corpora is not None and not request.sub_corpora) or (
            request.document_ids is not None and not request.document_ids
        ):
            return []
        opened = _open(self.options)
        clauses = []
        for field_name, analyzer in opened.fields.items():
            terms = dict.fromkeys(token.text for token in analyzer(request.query))
            clauses += [wq.Term(field_name, term) for term in terms]
        if not clauses:
            return []
        whoosh_query = wq.Or(clauses)
        filter_query, mask_query = _filter(request), _mask(request)
        with opened.lock:  # one thread at a time on the cached searcher
            searcher = _searcher(opened, self.k1, self.b)

            def fetch_chunks(limit: int) -> list[Hit]:
                results = searcher.search(
                    whoosh_query, filter=filter_query, mask=mask_query, limit=limit
                )
                return [
                    Hit(chunk_id=int(r["chunk_id"]), document_id=int(r["document_id"]),
                        document_key=r["document_key"], sub_corpus=r["sub_corpus"],
                        score=float(r.score), rank=0, channel=self.name)
                    for r in results
                ]

            return best_chunk_per_document(fetch_chunks, request.limit)


def _searcher(opened: _OpenIndex, k1: float, b: float):
    """Return the open index's searcher for these BM25 parameters (caller holds its lock)."""
    searcher = opened.searchers.get((k1, b))
    if searcher is None:
        searcher = opened.index.searcher(weighting=BM25F(B=b, K1=k1))
        opened.searchers[(k1, b)] = searcher
    return searcher


def clear_cache() -> None:
    """Close every open index of this process (tests and index maintenance)."""
    with _cache_lock:
        for opened in _cache.values():
            _close(opened)
        _cache.clear()
