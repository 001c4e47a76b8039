"""Write synthetic archives from the demo corpus's real sentences, reshuffled, as JSON Lines."""

from __future__ import annotations

import datetime as dt
import json
import random
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from archive.chunking import chunk_text, sentence_spans
from common.document_keys import document_key

# At least five sub-corpora, press and debates, so filtered queries keep a fifth or less.
SUB_CORPORA = (
    ("bench_le_matin", "Le Matin"),
    ("bench_le_temps", "Le Temps"),
    ("bench_le_figaro", "Le Figaro"),
    ("bench_petit_journal", "Le Petit Journal"),
    ("debats_bench_chambre", "Chambre des députés, débats (Journal officiel)"),
    ("debats_bench_senat", "Sénat, débats (Journal officiel)"),
)
# Dates spread over decades.
FIRST_DAY = dt.date(1850, 1, 1)
LAST_DAY = dt.date(1939, 12, 31)
# New arrivals (the freshness measure) get a sub-corpus and a decade of their own.
FRESH_SUB_CORPUS = ("bench_arrivees", "Arrivées récentes")
FRESH_FIRST_DAY = dt.date(1950, 1, 1)
FRESH_LAST_DAY = dt.date(1959, 12, 31)


@dataclass(frozen=True)
class SeedCorpus:
    """What the synthetic archives are made of: the demo's sentences and document sizes."""

    sentences: list[str]
    document_chars: list[int]

    @classmethod
    def from_corpus(cls, path: Path) -> SeedCorpus:
        """Read every sentence and document length of a shared-layout corpus file."""
        sentences: list[str] = []
        sizes: list[int] = []
        with path.open(encoding="utf-8") as handle:
            for line in handle:
                if not line.strip():
                    continue
                text = json.loads(line)["text"]
                sizes.append(len(text))
                sentences += [text[a:b] for a, b in sentence_spans(text) if b - a > 1]
        return cls(sentences=sentences, document_chars=sizes)


def _documents(source: SeedCorpus, rng: random.Random, *, slugs: tuple[tuple[str, str], ...],
               first_day: dt.date, last_day: dt.date, prefix: str
               ) -> Iterator[dict]:
    """Yield shared-layout rows forever, deterministic for ``rng``."""
    span = (last_day - first_day).days
    number = 0
    while True:
        number += 1
        target = rng.choice(source.document_chars)
        parts: list[str] = []
        size = 0
        while size < target:
            sentence = rng.choice(source.sentences)
            parts.append(sentence)
            size += len(sentence) + 1
            if rng.random() < 0.2:
                parts.append("\n\n")
        text = " ".join(parts).replace(" \n\n ", "\n\n").strip()
        slug, name = slugs[number % len(slugs)]
        raw_id = f"{prefix}{number:08d}"
        row = {
            "doc_id": document_key(slug, raw_id), "collection": slug, "source": name,
            "raw_id": raw_id,
            "date": (first_day + dt.timedelta(days=rng.randrange(span + 1))).isoformat(),
            "text": text,
        }
        yield row


def write_archive(source: SeedCorpus, path: Path, *, chunks: int, seed: int = 1887,
                  calibration: int = 300) -> dict:
    """Write documents until about ``chunks`` chunks; return counts (documents, estimate).

    The first ``calibration`` documents are chunked for real; their words per chunk estimate
    the chunks of the rest (chunking them all would cost as much as the ingest).
    """
    rng = random.Random(seed)
    estimate = 0.0
    documents = words = exact = 0
    with path.open("w", encoding="utf-8") as out:
        for row in _documents(source, rng, slugs=SUB_CORPORA, first_day=FIRST_DAY,
                                        last_day=LAST_DAY, prefix="d"):
            if estimate >= chunks:
                break
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
            documents += 1
            if documents <= calibration:
                exact += len(chunk_text(row["text"]))
                words += len(row["text"].split())
                estimate = float(exact)
            else:
                estimate += len(row["text"].split()) / (words / exact)
    return {"documents": documents, "chunks_estimated": round(estimate)}


def write_arrivals(source: SeedCorpus, path: Path, *, documents: int, seed: int = 1950) -> dict:
    """Write ``documents`` new documents in their own sub-corpus and decade."""
    rng = random.Random(seed)
    rows = _documents(source, rng, slugs=(FRESH_SUB_CORPUS,), first_day=FRESH_FIRST_DAY,
                      last_day=FRESH_LAST_DAY, prefix="n")
    with path.open("w", encoding="utf-8") as out:
        for _ in range(documents):
            row = next(rows)
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
    return {"documents": documents}
