"""Measure the archive: chunk statistics, ingest throughput, index latency, dense recall.

Runs in a scratch database created for the run and dropped at the end, so the development
archive is never touched. Usage (from the repository root):

    .venv/bin/python measurement/scripts/bench_ingest.py \
        --corpus demo/historiqa/corpus.jsonl --questions demo/historiqa/questions_dev.jsonl \
        --press-corpus demo/historiqa-press/corpus.jsonl \
        --press-questions demo/historiqa-press/questions_dev.jsonl --out bench.json

Dense recall is plain retrieval: the question embedded as a query, every chunk scored by
cosine, a document scored by its best chunk (max-pool), recall@10 and multi-gold MRR.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "trace_site.settings")

import django  # noqa: E402

django.setup()

import numpy as np  # noqa: E402
from django.db import connection, transaction  # noqa: E402
from pgvector.django import CosineDistance  # noqa: E402

from archive.chunking import chunk_text, sentence_spans  # noqa: E402
from archive.embeddings import embed_passages_cached, get_provider  # noqa: E402
from archive.embeddings.local import E5Provider, UseProvider  # noqa: E402
from archive.models import Chunk, Document  # noqa: E402
from archive.services import ingest_file  # noqa: E402
from common.document_keys import document_key, split_document_key  # noqa: E402
from common.ranking_metrics import multi_gold_mrr, recall_at_k  # noqa: E402
from common.sql import like_pattern  # noqa: E402
from measurement.evaluation.metrics import median, recall_by_group  # noqa: E402
from measurement.evaluation.records import ResultRow  # noqa: E402


def log(message: str) -> None:
    print(f"[bench] {message}", flush=True)


def chunk_stats(corpus: Path) -> dict:
    rows = [json.loads(line) for line in corpus.open(encoding="utf-8") if line.strip()]
    out: dict = {"documents": len(rows), "by_sub_corpus": {}}
    for glued in (True, False):
        chunks = [
            (r["collection"], c) for r in rows for c in chunk_text(r["text"], split_glued=glued)
        ]
        sentences = sum(len(sentence_spans(r["text"], split_glued=glued)) for r in rows)
        key = "split_glued" if glued else "spaced_only"
        out[key] = {"chunks": len(chunks), "sentences": sentences}
        if glued:
            for slug in sorted({s for s, _ in chunks}):
                counts = [c.token_count for s, c in chunks if s == slug]
                out["by_sub_corpus"][slug] = {
                    "chunks": len(counts), "tokens_median": median(counts),
                    "tokens_mean": round(statistics.mean(counts), 1), "tokens_max": max(counts),
                    "capped_1000": sum(1 for n in counts if n == 1000),
                }
            all_counts = [c.token_count for _, c in chunks]
            out["tokens_median"] = median(all_counts)
            out["tokens_mean"] = round(statistics.mean(all_counts), 1)
            out["tokens_max"] = max(all_counts)
    same = sum(
        1 for r in rows
        if [(c.char_start, c.char_end) for c in chunk_text(r["text"])]
        == [(c.char_start, c.char_end) for c in chunk_text(r["text"], split_glued=False)]
    )
    out["documents_with_identical_chunks_either_way"] = same
    return out


def timed_ingest(corpus: Path, *, embed: bool, provider=None) -> dict:
    Document.objects.all().delete()
    started = time.perf_counter()
    report = ingest_file(path=corpus, embed=embed, provider=provider, progress=True)
    seconds = time.perf_counter() - started
    chunks = Chunk.objects.count()
    return {
        "documents": report.created, "chunks": chunks, "seconds": round(seconds, 2),
        "documents_per_s": round(report.created / seconds, 1),
        "chunks_per_s": round(chunks / seconds, 1),
        "embeddings_computed": report.embeddings_computed,
    }


def query_latency(questions: list[dict], provider) -> dict:
    """Median latency of vector and trigram queries, as planned and with scans forbidden."""

    sample = questions[:60]
    vectors = provider.embed_queries([q["question"] for q in sample])
    words = [max(q["question"].split(), key=len).strip("?,.'’\"") for q in sample]
    runs = {
        "hnsw_cosine_top10": (list(vectors), lambda v: Chunk.objects.order_by(
            CosineDistance("embedding", v)).values_list("pk", flat=True)[:10]),
        "trigram_word_similar": (words, lambda w: Chunk.objects.filter(
            text__trigram_word_similar=w).order_by().values_list("pk", flat=True)),
        "trigram_ilike": (words, lambda w: Chunk.objects.filter(
            text__ilike=like_pattern(w)).order_by().values_list("pk", flat=True)),
    }
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE archive_chunk")
    out = {}
    for mode in ("planner", "index_forced"):
        with transaction.atomic():
            if mode == "index_forced":
                with connection.cursor() as cursor:
                    cursor.execute("SET LOCAL enable_seqscan = off")
            for name, (items, query) in runs.items():
                times = []
                for item in items:
                    started = time.perf_counter()
                    list(query(item))
                    times.append((time.perf_counter() - started) * 1000)
                plan = query(items[0]).explain()
                used = "chunk_embedding_hnsw" in plan or "chunk_text_trgm" in plan
                ms = round(median(times[3:]), 2)
                out[f"{name}/{mode}"] = {"median_ms": ms, "index_used": used}
                log(f"{name} ({mode}): median {ms} ms, index used: {used}")
    return out


def dense_eval(provider, questions: list[dict], doc_filter: set[str] | None) -> dict:
    rows = list(
        Chunk.objects.select_related("document__sub_corpus")
        .order_by("pk").values_list("document__sub_corpus__slug", "document__external_id",
                                    "document__sub_corpus__genre", "text")
    )
    rows = [r for r in rows if doc_filter is None or document_key(r[0], r[1]) in doc_filter]
    keys = [document_key(r[0], r[1]) for r in rows]
    genre = {document_key(r[0], r[1]): r[2] for r in rows}
    started = time.perf_counter()
    passages, computed = embed_passages_cached(provider, [r[3] for r in rows])
    embed_seconds = time.perf_counter() - started
    queries = provider.embed_queries([q["question"] for q in questions])
    doc_ids = sorted(set(keys))
    index = {d: i for i, d in enumerate(doc_ids)}
    owner = np.array([index[k] for k in keys])
    scores = queries @ passages.T
    recall, mrr = [], []
    tops: list[ResultRow] = []
    top_share: dict[str, int] = {}
    for qi, question in enumerate(questions):
        best = np.full(len(doc_ids), -np.inf, dtype=np.float32)
        np.maximum.at(best, owner, scores[qi])
        ranking = [doc_ids[i] for i in np.argsort(-best, kind="stable")]
        gold = question["gold_ids"]
        recall.append(recall_at_k(ranking, gold, 10))
        mrr.append(multi_gold_mrr(ranking, gold))
        tops.append(ResultRow(ranked_keys=ranking[:10], gold_keys=gold))
        for d in ranking[:10]:
            slug = split_document_key(d)[0]
            top_share[slug] = top_share.get(slug, 0) + 1
    total_slots = sum(top_share.values())
    return {
        "provider": provider.name, "questions": len(questions), "chunks": len(rows),
        "recall_at_10": round(float(np.mean(recall)), 3), "mrr": round(float(np.mean(mrr)), 3),
        "gold_recall_at_10_by_genre": {g: round(group.recall, 3)
                                       for g, group in recall_by_group(tops, genre).items()},
        "top10_share": {s: round(n / total_slots, 3) for s, n in sorted(top_share.items())},
        "passages_embedded": computed,
        "passages_per_s": round(computed / embed_seconds, 2) if computed else None,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, required=True)
    parser.add_argument("--questions", type=Path, required=True)
    parser.add_argument("--press-corpus", type=Path, required=True)
    parser.add_argument("--press-questions", type=Path, required=True)
    parser.add_argument("--out", type=Path, help="write every figure to this JSON file")
    parser.add_argument(
        "--variants", default="use-whole,use-w225-mean,use-w225-max,use-whole-deglue,e5-w225-mean",
        help="comma-separated dense variants to evaluate",
    )
    parser.add_argument("--latency-only", action="store_true",
                        help="ingest with the hash provider and only time the index queries")
    args = parser.parse_args()

    results: dict = {}
    log("chunk statistics")
    results["chunks"] = chunk_stats(args.corpus)
    log(json.dumps(results["chunks"], ensure_ascii=False))

    old_name = connection.settings_dict["NAME"]
    connection.creation.create_test_db(verbosity=0, autoclobber=True, keepdb=False)
    try:
        if args.latency_only:
            questions = [json.loads(x) for x in args.questions.open(encoding="utf-8") if x]
            results["ingest_hash"] = timed_ingest(args.corpus, embed=True, provider="hash")
            log(str(results["ingest_hash"]))
            results["latency"] = query_latency(questions, get_provider("hash"))
            return _write(args.out, results)
        log("ingest without embedding")
        results["ingest_no_embed"] = timed_ingest(args.corpus, embed=False)
        log(str(results["ingest_no_embed"]))
        use = UseProvider()
        use.embed_queries(["warm-up"])  # load the weights outside the timing
        log("ingest with embedding (USE, empty cache)")
        results["ingest_use"] = timed_ingest(args.corpus, embed=True, provider=use)
        log(str(results["ingest_use"]))
        log("re-ingest with embedding from the cache")

        Document.objects.all().delete()
        results["ingest_use_cached"] = timed_ingest(args.corpus, embed=True, provider=use)
        log(str(results["ingest_use_cached"]))

        questions = [json.loads(x) for x in args.questions.open(encoding="utf-8") if x.strip()]
        press_questions = [
            json.loads(x) for x in args.press_questions.open(encoding="utf-8") if x.strip()
        ]
        press_docs = {
            json.loads(x)["doc_id"] for x in args.press_corpus.open(encoding="utf-8") if x.strip()
        }
        results["latency"] = query_latency(questions, use)

        variants = {
            "use-whole": ("use, whole chunk (default)", UseProvider(), True),
            "use-w225-mean": ("use, 225-word windows, mean", UseProvider(window_words=225), True),
            "use-w225-max": ("use, 225-word windows, max", UseProvider(window_words=225,
                                                                       pooling="max"), True),
            "use-whole-deglue": ("use, whole chunk, glued words spread",
                                 UseProvider(deglue=True), True),
            "use-w225-deglue": ("use, 225-word windows, mean, glued words spread",
                                UseProvider(window_words=225, deglue=True), True),
            # e5 embeds ~0.7 long passages/s on two cores: the press slice only.
            "e5-w225-mean": ("e5-small, 225-word windows, mean", E5Provider(), False),
        }
        results["dense"] = {}
        for key in args.variants.split(","):
            label, provider, full = variants[key]
            entry = {}
            log(f"dense eval: {label} (press)")
            entry["press"] = dense_eval(provider, press_questions, press_docs)
            log(json.dumps(entry["press"]))
            if full:
                log(f"dense eval: {label} (historiqa)")
                entry["historiqa"] = dense_eval(provider, questions, None)
                log(json.dumps(entry["historiqa"]))
            results["dense"][label] = entry
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)
    _write(args.out, results)


def _write(out: Path | None, results: dict) -> None:
    if out:
        out.write_text(json.dumps(results, indent=2, ensure_ascii=False))
        log(f"wrote {out}")


if __name__ == "__main__":
    main()
