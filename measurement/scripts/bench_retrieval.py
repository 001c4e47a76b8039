"""Print median and p95 latency per retrieval channel over the dev questions.

Usage: python measurement/scripts/bench_retrieval.py [--questions FILE] [--limit N]
       [--write-doc FILE]
Runs against the configured database (the loaded demo corpus); a benchmark, not a test.
With --write-doc, the table is also written into the document's generated block.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "trace_site.settings")

import django  # noqa: E402

django.setup()

from archive.models import Chunk, Document  # noqa: E402
from common.french_dates import extract_date_window  # noqa: E402
from common.generated_docs import (  # noqa: E402
    check_generated_block,
    shown_path,
    write_doc_blocks,
)
from common.search import DateWindow, SearchRequest  # noqa: E402
from measurement.evaluation.fusions import per_subcorpus_hybrid  # noqa: E402
from measurement.evaluation.metrics import median, percentile  # noqa: E402
from measurement.evaluation.questions import load_questions  # noqa: E402
from retrieval import channels as registry  # noqa: E402
from retrieval.channels import dense  # noqa: E402
from retrieval.warm_start import warm_start  # noqa: E402

DEFAULT_QUESTIONS = ROOT / "demo" / "historiqa" / "questions_dev.jsonl"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=Path, default=DEFAULT_QUESTIONS)
    parser.add_argument("--limit", type=int, default=200)
    parser.add_argument("--cap", type=int, default=20)
    parser.add_argument("--write-doc", type=Path, action="append", default=[],
                        help="write the table into this document's generated block (repeatable)")
    parser.add_argument("--doc-block", default="channel-latency")
    args = parser.parse_args()
    for doc in args.write_doc:  # before the run, not after it
        check_generated_block(doc, args.doc_block)

    questions = load_questions(args.questions)[: args.limit]

    def request(channel: str, query: str = "", window=None, limit: int = args.cap):
        return SearchRequest(channel=channel, query=query, window=window, limit=limit)

    def run_channel(name: str, query: str = "", window=None):
        return registry.get(name).search(request(name, query, window))

    embedder = dense.get_embedder()
    vectors = embedder.embed_queries([q.question for q in questions])  # batch, untimed
    fallback = DateWindow.around(dt.date(1887, 6, 1))

    def entity(text: str) -> str:
        # A capitalised word from the question, as the agent would send to the substring channel.
        words = [w.strip("?,.;:'\"") for w in text.split()[1:]]
        names = [w for w in words if len(w) > 3 and w[:1].isupper()]
        return names[0] if names else words[0]

    channels = {
        "bm25": lambda i, q: run_channel("bm25", q),
        "dense (query vector given)": lambda i, q: dense.search_vector(
            vectors[i], request("dense"), model_name=embedder.name),
        "dense (with query embedding)": lambda i, q: run_channel("dense", q),
        "temporal": lambda i, q: run_channel("temporal", window=extract_date_window(q) or fallback),
        "substring": lambda i, q: run_channel("substring", entity(q)),
        "warm start": lambda i, q: warm_start(request("warm_start", q, limit=10)),
        "warm start per sub-corpus": lambda i, q: per_subcorpus_hybrid(
            request("warm_start", q, limit=10)),
    }
    intro = (f"{len(questions)} questions of `{args.questions.name}`, cap {args.cap}; archive: "
             f"{Document.objects.count()} documents, {Chunk.objects.count()} chunks; "
             "each channel warmed up once.")
    lines = [f"| {'channel':<30} | median ms | p95 ms |", f"|{'-' * 32}|-----------|--------|"]
    print(intro)
    print(*lines, sep="\n")
    for name, run in channels.items():
        run(0, questions[0].question)  # warm-up: index open, model load
        seconds = []
        for index, question in enumerate(questions):
            start = time.perf_counter()
            run(index, question.question)
            seconds.append(time.perf_counter() - start)
        mid, p95 = 1000 * median(seconds), 1000 * percentile(seconds, 95)
        lines.append(f"| {name:<30} | {mid:9.1f} | {p95:6.1f} |")
        print(lines[-1], flush=True)
    words = ["python", "measurement/scripts/bench_retrieval.py", "--questions",
             shown_path(args.questions, ROOT), "--limit", str(args.limit), "--cap", str(args.cap)]
    write_doc_blocks(args.write_doc, args.doc_block, intro + "\n\n" + "\n".join(lines),
                     words=words, default_block="channel-latency", base=ROOT)
    for doc in args.write_doc:
        print(f"table -> {doc} (block {args.doc_block})")


if __name__ == "__main__":
    main()
