"""Compare the BM25 engines on speed: full build, per-document updates, query latency.

Builds each engine's index from a synthetic archive made of the demo's chunks (each document
copied with new ids, its sentences reshuffled so copies differ), in a scratch directory, without
Postgres. Usage (from the repository root):

    .venv/bin/python measurement/scripts/bench_bm25_engines.py \
        --corpus demo/historiqa/corpus.jsonl \
        --questions demo/historiqa/questions_dev.jsonl --copies 50

Prints one Markdown table (with --write-doc FILE, also written into the file's generated block).
Retrieval quality is measured by `manage.py evaluate` instead.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from archive.chunking import chunk_text  # noqa: E402
from common.generated_docs import (  # noqa: E402
    check_generated_block,
    shown_path,
    write_doc_blocks,
)
from common.search import SearchRequest  # noqa: E402
from measurement.evaluation.metrics import median, percentile  # noqa: E402
from retrieval.analysis import DEFAULT_OPTIONS  # noqa: E402
from retrieval.bm25.base import IndexChanges, IndexedChunk  # noqa: E402
from retrieval.bm25.tantivy_engine import TantivyIndex  # noqa: E402
from retrieval.bm25.whoosh_engine import WhooshIndex  # noqa: E402

K1, B = 1.5, 0.9
BATCH = 500  # documents per commit, as the indexer drains the outbox


def synthetic_documents(corpus: Path, copies: int) -> list[list[IndexedChunk]]:
    """Return documents (lists of chunks) copied from the corpus with new ids."""
    rows = [json.loads(line) for line in corpus.read_text(encoding="utf-8").splitlines() if line]
    rng = random.Random(1887)
    documents, chunk_id = [], 0
    for copy in range(copies):
        for document_id, row in enumerate(rows, start=copy * len(rows) + 1):
            sentences = row["text"].split(". ")
            if copy:
                rng.shuffle(sentences)
            day = dt.date.fromisoformat(row["date"]).toordinal() if row.get("date") else None
            chunks = []
            for piece in chunk_text(". ".join(sentences)):
                chunk_id += 1
                chunks.append(IndexedChunk(chunk_id, document_id, f"{row['doc_id']}#{copy}",
                                           row["collection"], "fr", day, piece.text))
            documents.append(chunks)
    return documents


def bench(engine: str, documents: list[list[IndexedChunk]], questions: list[str]) -> dict:
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / engine
        index = (TantivyIndex.create(path, DEFAULT_OPTIONS, K1, B) if engine == "tantivy"
                 else WhooshIndex.create(path, DEFAULT_OPTIONS, K1, B))
        started = time.perf_counter()
        for i in range(0, len(documents), BATCH):
            batch = documents[i : i + BATCH]
            index.apply(IndexChanges((), tuple(c for doc in batch for c in doc)))
        build = time.perf_counter() - started
        chunks = sum(len(doc) for doc in documents)
        # An ingest of 25 documents replacing existing ones (delete by document id, add).
        updates = []
        for start in range(0, 250, 25):
            batch = documents[start : start + 25]
            ids = tuple(doc[0].document_id for doc in batch if doc)
            t0 = time.perf_counter()
            index.apply(IndexChanges(ids, tuple(c for doc in batch for c in doc)))
            updates.append(time.perf_counter() - t0)
        slugs = sorted({doc[0].sub_corpus for doc in documents if doc})
        timings: dict[str, list[float]] = {"unfiltered": [], "sub-corpus": []}
        for question in questions:
            for label, request in (
                ("unfiltered", SearchRequest("bm25", question, limit=40)),
                ("sub-corpus", SearchRequest("bm25", question, limit=40,
                                             sub_corpora=(slugs[0],))),
            ):
                t0 = time.perf_counter()
                index.search(question, request, 40)
                timings[label].append(time.perf_counter() - t0)
        size = sum(f.stat().st_size for f in path.rglob("*") if f.is_file())
        index.close()
    return {
        "engine": engine, "chunks": chunks, "build_s": build, "chunks_per_s": chunks / build,
        "update25_median_s": median(updates),
        "query_p50_ms": 1000 * median(timings["unfiltered"]),
        "query_p95_ms": 1000 * percentile(timings["unfiltered"], 95),
        "filtered_p50_ms": 1000 * median(timings["sub-corpus"]),
        "size_mb": size / 1e6,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, required=True)
    parser.add_argument("--questions", type=Path, required=True)
    parser.add_argument("--copies", type=int, default=50)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--engine", action="append", choices=("whoosh", "tantivy"))
    parser.add_argument("--write-doc", type=Path, action="append", default=[],
                        help="write the table into this document's generated block (repeatable)")
    parser.add_argument("--doc-block", default="bm25-engines-speed")
    args = parser.parse_args()
    for doc in args.write_doc:  # before the run, not after it
        check_generated_block(doc, args.doc_block)
    documents = synthetic_documents(args.corpus, args.copies)
    questions = [json.loads(line)["question"] for line in
                 args.questions.read_text(encoding="utf-8").splitlines() if line][: args.queries]
    lines = ["| engine | chunks | full build s | chunks/s | 25-document update s (median) | "
             "query p50 ms | query p95 ms | sub-corpus filter p50 ms | index MB |",
             "|---|---|---|---|---|---|---|---|---|"]
    print(*lines, sep="\n")
    for engine in args.engine or ["whoosh", "tantivy"]:
        r = bench(engine, documents, questions)
        lines.append(
            f"| {r['engine']} | {r['chunks']} | {r['build_s']:.1f} | {r['chunks_per_s']:.0f} | "
            f"{r['update25_median_s']:.2f} | {r['query_p50_ms']:.1f} | {r['query_p95_ms']:.1f} | "
            f"{r['filtered_p50_ms']:.1f} | {r['size_mb']:.1f} |")
        print(lines[-1], flush=True)
    if args.write_doc:
        load = " ".join(f"{x:.2f}" for x in os.getloadavg())
        intro = (f"{args.copies} copies of `{args.corpus.name}`, {len(questions)} queries of "
                 f"`{args.questions.name}`; {os.cpu_count()} CPUs, load average {load} at the end.")
        words = ["python", "measurement/scripts/bench_bm25_engines.py",
                 "--corpus", shown_path(args.corpus, ROOT),
                 "--questions", shown_path(args.questions, ROOT),
                 "--copies", str(args.copies), "--queries", str(args.queries)]
        words += [arg for engine in args.engine or [] for arg in ("--engine", engine)]
        write_doc_blocks(args.write_doc, args.doc_block, intro + "\n\n" + "\n".join(lines),
                         words=words, default_block="bm25-engines-speed", base=ROOT)
        for doc in args.write_doc:
            print(f"table -> {doc} (block {args.doc_block})")


if __name__ == "__main__":
    main()
