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
class Source:
    """What the synthetic archives are made of: the demo's sentences and document sizes."""

    sentences: list[str]
    document_chars: list[int]
    words_per_chunk: float

    @classmethod
    def from_corpus(cls, path: Path) -> Source:
        """Read every sentence and document length of a shared-layout corpus file."""
        sentences: list[str] = []
        sizes: list[int] = []
        words = chunks = 0
        with path.open(encoding="utf-8") as handle:
            for line in handle:
                if not line.strip():
                    continue
                text = json.loads(line)["text"]
                sizes.append(len(text))
                sentences += [text[a:b] for a, b in sentence_spans(text) if b - a > 1]
                words += len(text.split())
                chunks += len(chunk_text(text))
        return cls(sentences=sentences, document_chars=sizes, words_per_chunk=words / chunks)


def _documents(source: Source, rng: random.Random, *, slugs: tuple[tuple[str, str], ...],
               first_day: dt.date, last_day: dt.date, prefix: str
               ) -> Iterator[tuple[dict, float]]:
    """Yield (shared-layout row, estimated chunks) forever, deterministic for ``rng``."""
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
        yield row, max(1.0, len(text.split()) / source.words_per_chunk)


def write_archive(source: Source, path: Path, *, chunks: int, seed: int = 1887) -> dict:
    """Write documents until about ``chunks`` chunks; return counts (documents, estimate)."""
    rng = random.Random(seed)
    estimate = 0.0
    documents = 0
    with path.open("w", encoding="utf-8") as out:
        for row, expected in _documents(source, rng, slugs=SUB_CORPORA, first_day=FIRST_DAY,
                                        last_day=LAST_DAY, prefix="d"):
            if estimate >= chunks:
                break
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
            estimate += expected
            documents += 1
    return {"documents": documents, "chunks_estimated": round(estimate)}


def write_arrivals(source: Source, path: Path, *, documents: int, seed: int = 1950) -> dict:
    """Write ``documents`` new documents in their own sub-corpus and decade."""
    rng = random.Random(seed)
    rows = _documents(source, rng, slugs=(FRESH_SUB_CORPUS,), first_day=FRESH_FIRST_DAY,
                      last_day=FRESH_LAST_DAY, prefix="n")
    with path.open("w", encoding="utf-8") as out:
        for _ in range(documents):
            row, _ = next(rows)
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
    return {"documents": documents}
