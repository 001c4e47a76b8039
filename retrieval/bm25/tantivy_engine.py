"""The Tantivy engine: texts analysed in Rust as whoosh does, BM25 rescored to our k1 and b.

One analyzer per language (see ``tantivy_analysis``) is registered again on every open (Tantivy
does not persist custom analyzers). Tantivy ranks candidates with its fixed BM25 parameters;
the best ``RESCORE_CANDIDATES`` are rescored with the stored k1 and b. The index also holds each
chunk's distinct folded words (field ``words``), which the substring channel scores in
``word_search``.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import tantivy
from whoosh.lang import languages as whoosh_languages

from common.search import SearchRequest
from retrieval.analysis import AnalyzerOptions
from retrieval.bm25.base import ChunkMatch, IndexChanges, IndexCorrupt, WordQuery
from retrieval.bm25.tantivy_analysis import (
    RESCORE_CANDIDATES,
    build_text_analyzer,
    prepare,
    rescored,
    tokenizer_name,
)

ENGINE = "tantivy"
LANGUAGES_FILE = "trace-languages.json"
WRITER_HEAP_BYTES = 64_000_000
# Document ids counted per terms aggregation (Tantivy's bucket limit is 65,000).
COUNTED_PER_AGGREGATION = 50_000
# Tantivy's schema is fixed at creation: one text field per analyzer language whoosh knows.
LANGUAGES = sorted({*whoosh_languages, "xx"})


def _schema() -> Any:
    builder = tantivy.SchemaBuilder()
    builder.add_integer_field("chunk_id", stored=True, indexed=True, fast=True)
    builder.add_integer_field("document_id", stored=True, indexed=True, fast=True)
    builder.add_text_field("document_key", stored=True, tokenizer_name="raw")
    builder.add_text_field("sub_corpus", stored=True, tokenizer_name="raw")
    builder.add_integer_field("day", indexed=True, fast=True)
    # The chunk's distinct folded words (the vocabulary's), one term each: the substring channel.
    builder.add_text_field("words", tokenizer_name="raw", index_option="basic")
    for language in LANGUAGES:
        builder.add_text_field(f"text_{language}", tokenizer_name=tokenizer_name(language),
                                index_option="freq")
    return builder.build()


class TantivyIndex:
    """A Tantivy index directory; its reader reloads on every new commit."""

    def __init__(self, path: Path, options: AnalyzerOptions, k1: float, b: float) -> None:
        self.path = path
        self.options = options
        self.k1 = k1
        self.b = b
        self._analyzers = {lang: build_text_analyzer(lang, options) for lang in LANGUAGES}
        self._lock = threading.Lock()
        self._index: Any = None
        self._seen_commit = -1  # meta.json's mtime when the reader last reloaded
        self._languages: list[str] = ["fr"]  # languages holding chunks: the fields queried

    @staticmethod
    def exists(path: Path) -> bool:
        """Tell whether a committed index is present at ``path``."""
        return (path / "meta.json").is_file()

    @classmethod
    def create(cls, path: Path, options: AnalyzerOptions, k1: float, b: float) -> TantivyIndex:
        """Create an empty index at ``path``."""
        path.mkdir(parents=True, exist_ok=True)
        opened = cls(path, options, k1, b)
        ix = tantivy.Index(_schema(), path=str(path), reuse=False)
        opened._register(ix)
        writer = ix.writer(WRITER_HEAP_BYTES, 1)
        writer.commit()
        writer.wait_merging_threads()
        return opened

    def _register(self, ix: Any) -> None:
        for language, analyzer in self._analyzers.items():
            ix.register_tokenizer(tokenizer_name(language), analyzer)

    def _open(self) -> Any:
        if self._index is None:
            if not self.exists(self.path):
                raise IndexCorrupt(f"{self.path}: no committed index")
            try:
                ix = tantivy.Index.open(str(self.path))
            except Exception as exc:  # a damaged meta.json or segment
                raise IndexCorrupt(f"{self.path}: {type(exc).__name__}: {exc}") from exc
            self._register(ix)
            self._index = ix
        return self._index

    def _reader(self) -> Any:
        """Return the open index, its reader reloaded if a newer commit exists (one stat call)."""
        ix = self._open()
        try:
            commit = (self.path / "meta.json").stat().st_mtime_ns
        except OSError as exc:
            raise IndexCorrupt(f"{self.path}: {exc}") from exc
        if commit != self._seen_commit:
            with self._lock:
                ix.reload()
                self._languages = self._read_languages()
                self._seen_commit = commit
        return ix

    def _read_languages(self) -> list[str]:
        try:
            found = json.loads((self.path / LANGUAGES_FILE).read_text())
        except (OSError, ValueError):
            return ["fr"]
        return [lang for lang in found if lang in self._analyzers] or ["fr"]

    def terms(self, language: str, text: str) -> list[str]:
        """Return the index terms of a text, as the analyzer of that language gives them."""
        analyzer = self._analyzers.get(language) or self._analyzers["xx"]
        return list(analyzer.analyze(prepare(text, self.options)))

    def apply(self, changes: IndexChanges) -> None:
        """Delete the documents' chunks, add the given ones, commit, then collect dead files."""
        ix = self._open()
        writer = ix.writer(WRITER_HEAP_BYTES, 1)
        try:
            for document_id in changes.remove_document_ids:
                writer.delete_documents_by_term("document_id", document_id)
            for chunk in changes.add:
                language = chunk.language if chunk.language in self._analyzers else "xx"
                fields: dict[str, Any] = {
                    "chunk_id": chunk.chunk_id, "document_id": chunk.document_id,
                    "document_key": chunk.document_key, "sub_corpus": chunk.sub_corpus,
                    f"text_{language}": prepare(chunk.text, self.options),
                }
                if chunk.day is not None:
                    fields["day"] = chunk.day
                if chunk.words:
                    fields["words"] = list(chunk.words)
                writer.add_document(tantivy.Document(**fields))
            languages = sorted(set(self._read_languages()) | {
                c.language if c.language in self._analyzers else "xx" for c in changes.add})
            # Written before the commit: a reader never misses a language that has chunks.
            (self.path / LANGUAGES_FILE).write_text(json.dumps(languages))
            writer.commit()
        except BaseException:
            writer.rollback()
            raise
        finally:
            # Merges finish here; then files no commit refers to any more are removed.
            writer.wait_merging_threads()
        collector = ix.writer(WRITER_HEAP_BYTES, 1)
        collector.garbage_collect_files()
        collector.wait_merging_threads()

    def _query(self, ix: Any, query: str, filters: SearchRequest) -> tuple[Any, Any] | None:
        """Return the filtered query and its scoring part alone (cheaper to explain)."""
        schema = ix.schema
        should = []
        for language in self._languages:
            for term in dict.fromkeys(self.terms(language, query)):
                should.append((tantivy.Occur.Should,
                               tantivy.Query.term_query(schema, f"text_{language}", term)))
        if not should:
            return None
        scoring = tantivy.Query.boolean_query(should)
        clauses = [(tantivy.Occur.Must, scoring), *_filter_clauses(schema, filters)]
        return tantivy.Query.boolean_query(clauses), scoring

    def search(self, query: str, filters: SearchRequest, limit: int) -> list[ChunkMatch]:
        """Return up to ``limit`` chunks matching any analysed query term, best first."""
        ix = self._reader()
        queries = self._query(ix, query, filters)
        if queries is None:
            return []
        tantivy_query, scoring = queries
        searcher = ix.searcher()
        hits = searcher.search(tantivy_query, max(limit, RESCORE_CANDIDATES), count=False).hits
        # Sorted by the rescored BM25; Tantivy's order breaks ties.
        ranked = sorted(
            ((rescored(scoring, searcher, address, self.k1, self.b), rank, address)
             for rank, (_, address) in enumerate(hits)),
            key=lambda item: (-item[0], item[1]))
        matches = []
        for score, _, address in ranked[:limit]:
            doc = searcher.doc(address)
            matches.append(ChunkMatch(doc["chunk_id"][0], doc["document_id"][0],
                                      doc["document_key"][0], doc["sub_corpus"][0], score))
        return matches

    def word_search(self, query: WordQuery, filters: SearchRequest, limit: int,
                    offset: int = 0) -> list[ChunkMatch]:
        """Return chunks ``offset`` to ``offset + limit`` of a word query, best first.

        A query word scores the best weight among its variants a chunk holds (a disjunction-max
        of constant scores), the chunk the sum over query words: computed in Rust over the
        postings of the variants only (no text read); common variants have long postings.
        """
        if any(not holding for holding in query.required):
            return []  # a required word no chunk holds
        ix = self._reader()
        schema = ix.schema

        def term(word: str) -> Any:
            return tantivy.Query.term_query(schema, "words", word)

        per_word = [
            tantivy.Query.disjunction_max_query(
                [tantivy.Query.const_score_query(term(word), weight) for word, weight in variants])
            for variants in query.scored if variants
        ]
        clauses = [(tantivy.Occur.Must, tantivy.Query.const_score_query(
            tantivy.Query.term_set_query(schema, "words", list(holding)), 0.0))
            for holding in query.required]
        scoring = [(tantivy.Occur.Should, part) for part in per_word]
        if clauses:
            clauses += scoring
        elif scoring:
            clauses = [(tantivy.Occur.Must, tantivy.Query.boolean_query(scoring))]
        else:
            return []
        clauses += _filter_clauses(schema, filters)
        searcher = ix.searcher()
        hits = searcher.search(tantivy.Query.boolean_query(clauses), limit, count=False,
                               offset=offset).hits
        matches = []
        for score, address in hits:
            doc = searcher.doc(address)
            matches.append(ChunkMatch(doc["chunk_id"][0], doc["document_id"][0],
                                      doc["document_key"][0], doc["sub_corpus"][0], float(score)))
        return matches

    def documents_indexed(self) -> dict[int, int]:
        """Count the live chunks of each document (aggregations over the document id column).

        Tantivy refuses a terms aggregation of more than 65,000 buckets: the ids are counted
        in ranges of `COUNTED_PER_AGGREGATION` consecutive ids, each under that limit.
        """
        ix = self._reader()
        counts: dict[int, int] = {}
        try:
            searcher = ix.searcher()
            if searcher.num_docs == 0:
                return {}
            bounds = searcher.aggregate(tantivy.Query.all_query(), {
                "ids": {"stats": {"field": "document_id"}}})["ids"]
            low, high = int(bounds["min"]), int(bounds["max"])
            for start in range(low, high + 1, COUNTED_PER_AGGREGATION):
                end = min(start + COUNTED_PER_AGGREGATION - 1, high)
                part = tantivy.Query.range_query(ix.schema, "document_id",
                                                 tantivy.FieldType.Integer, start, end)
                result = searcher.aggregate(part, {"docs": {"terms": {
                    "field": "document_id", "size": end - start + 1}}})
                counts.update((int(bucket["key"]), int(bucket["doc_count"]))
                              for bucket in result["docs"]["buckets"])
        except Exception as exc:
            raise IndexCorrupt(f"{self.path}: {type(exc).__name__}: {exc}") from exc
        return counts

    def chunk_count(self) -> int:
        """Return the number of live chunks in the last commit."""
        ix = self._reader()
        try:
            return int(ix.searcher().num_docs)
        except Exception as exc:
            raise IndexCorrupt(f"{self.path}: {type(exc).__name__}: {exc}") from exc

    def close(self) -> None:
        """Drop the open index (its reader and files)."""
        self._index = None


def _filter_clauses(schema: Any, filters: SearchRequest) -> list[tuple[Any, Any]]:
    """Return the request's restrictions (scoring nothing) and exclusions as boolean clauses."""
    restrictions = []
    if filters.sub_corpora is not None:
        restrictions.append(tantivy.Query.term_set_query(
            schema, "sub_corpus", list(filters.sub_corpora)))
    if filters.document_ids is not None:
        restrictions.append(tantivy.Query.term_set_query(
            schema, "document_id", list(filters.document_ids)))
    if filters.window is not None:
        restrictions.append(tantivy.Query.range_query(
            schema, "day", tantivy.FieldType.Integer, filters.window.start.toordinal(),
            filters.window.end.toordinal()))
    clauses = [(tantivy.Occur.Must, tantivy.Query.const_score_query(r, 0.0))
               for r in restrictions]
    if filters.exclude_chunk_ids:
        clauses.append((tantivy.Occur.MustNot, tantivy.Query.term_set_query(
            schema, "chunk_id", list(filters.exclude_chunk_ids))))
    if filters.exclude_document_keys:
        clauses.append((tantivy.Occur.MustNot, tantivy.Query.term_set_query(
            schema, "document_key", list(filters.exclude_document_keys))))
    return clauses
