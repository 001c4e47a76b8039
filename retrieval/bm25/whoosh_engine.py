"""The whoosh engine: incremental writer (delete a document's chunks by term, add the new ones)."""

from __future__ import annotations

import threading
from collections import Counter
from pathlib import Path
from typing import Any

from whoosh import index as whoosh_index
from whoosh import query as wq
from whoosh.fields import ID, NUMERIC, TEXT, Schema
from whoosh.scoring import BM25F

from common.search import SearchRequest
from retrieval.analysis import AnalyzerOptions, build_analyzer
from retrieval.bm25.base import ChunkMatch, IndexChanges, IndexCorrupt

ENGINE = "whoosh"


def _schema(languages: list[str], options: AnalyzerOptions) -> Schema:
    fields: dict[str, Any] = {
        "chunk_id": ID(stored=True, unique=True),
        "document_id": ID(stored=True),
        "document_key": ID(stored=True),
        "sub_corpus": ID(stored=True),
        "day": NUMERIC(int, bits=32, stored=False, signed=True),
    }
    for language in languages:
        fields[f"text_{language}"] = TEXT(analyzer=build_analyzer(language, options), stored=False)
    return Schema(**fields)


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


class WhooshIndex:
    """A whoosh index directory; readers refresh to the newest commit before each search."""

    def __init__(self, path: Path, options: AnalyzerOptions, k1: float, b: float) -> None:
        self.path = path
        self.options = options
        self.weighting = BM25F(B=b, K1=k1)
        self._lock = threading.Lock()  # one thread at a time on the shared searcher
        self._index: Any = None
        self._searcher: Any = None

    @staticmethod
    def exists(path: Path) -> bool:
        """Tell whether a committed index is present at ``path`` (readable or not)."""
        return path.is_dir() and any(path.glob("_MAIN_*.toc"))

    @classmethod
    def create(cls, path: Path, options: AnalyzerOptions, k1: float, b: float) -> WhooshIndex:
        """Create an empty index at ``path`` (a French field; others are added as they come)."""
        path.mkdir(parents=True, exist_ok=True)
        whoosh_index.create_in(path, _schema(["fr"], options)).close()
        return cls(path, options, k1, b)

    def _open(self):
        if self._index is None:
            try:
                self._index = whoosh_index.open_dir(self.path)
            except Exception as exc:  # whoosh raises many types for a damaged directory
                raise IndexCorrupt(f"{self.path}: {type(exc).__name__}: {exc}") from exc
        return self._index

    def apply(self, changes: IndexChanges) -> None:
        """Delete the documents' chunks, add the given chunks, commit (merging small segments)."""
        ix = self._open()
        writer = ix.writer(limitmb=256)
        try:
            names = set(ix.schema.names())
            for language in sorted({chunk.language for chunk in changes.add}):
                if f"text_{language}" not in names:
                    writer.add_field(f"text_{language}",
                                     TEXT(analyzer=build_analyzer(language, self.options)))
            for document_id in changes.remove_document_ids:
                writer.delete_by_term("document_id", str(document_id))
            for chunk in changes.add:
                doc: dict[str, str | int] = {
                    "chunk_id": str(chunk.chunk_id), "document_id": str(chunk.document_id),
                    "document_key": chunk.document_key, "sub_corpus": chunk.sub_corpus,
                    f"text_{chunk.language}": chunk.text,
                }
                if chunk.day is not None:
                    doc["day"] = chunk.day
                writer.add_document(**doc)
        except BaseException:
            writer.cancel()
            raise
        writer.commit()
        self._index = None  # reopen: the schema may have grown

    def _current_searcher(self):
        if self._searcher is None:
            self._searcher = self._open().searcher(weighting=self.weighting)
        elif not self._searcher.up_to_date():
            # A fresh reader, not `refresh()`: that reuses segment readers whose deletions are
            # stale, and a deleted document would still be found.
            self._searcher.close()
            self._index = None
            self._searcher = self._open().searcher(weighting=self.weighting)
        return self._searcher

    def search(self, query: str, filters: SearchRequest, limit: int) -> list[ChunkMatch]:
        """Return up to ``limit`` chunks matching any analysed query term, best first."""
        with self._lock:
            searcher = self._current_searcher()
            clauses = []
            for name in searcher.schema.names():
                if name.startswith("text_"):
                    analyzer = searcher.schema[name].analyzer
                    terms = dict.fromkeys(token.text for token in analyzer(query))
                    clauses += [wq.Term(name, term) for term in terms]
            if not clauses:
                return []
            results = searcher.search(wq.Or(clauses), filter=_filter(filters),
                                      mask=_mask(filters), limit=limit)
            return [ChunkMatch(int(r["chunk_id"]), int(r["document_id"]), r["document_key"],
                               r["sub_corpus"], float(r.score)) for r in results]

    def documents_indexed(self) -> dict[int, int]:
        """Count the live chunks of each document (deleted ones are skipped)."""
        try:
            with self._open().searcher() as searcher:
                return dict(Counter(int(fields["document_id"])
                                    for fields in searcher.all_stored_fields()))
        except IndexCorrupt:
            raise
        except Exception as exc:
            raise IndexCorrupt(f"{self.path}: {type(exc).__name__}: {exc}") from exc

    def chunk_count(self) -> int:
        """Return the number of live chunks in the last commit."""
        try:
            return int(whoosh_index.open_dir(self.path).doc_count())
        except Exception as exc:
            raise IndexCorrupt(f"{self.path}: {type(exc).__name__}: {exc}") from exc

    def close(self) -> None:
        """Close the searcher and the index."""
        with self._lock:
            if self._searcher is not None:
                self._searcher.close()
            self._searcher = None
            self._index = None
