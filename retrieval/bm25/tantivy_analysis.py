"""Tantivy's side of BM25: the whoosh analyzer rebuilt in Rust, and BM25 rescored to our parameters.

Analysis runs inside Tantivy (regex tokenizer, lowercase, whoosh's stop words, ASCII folding);
only the lowercase->uppercase cut of glued OCR words ("laChambre") is done in Python, since the
Rust regex engine has no lookbehind. Tantivy's own BM25 has fixed parameters (k1 1.2, b 0.75):
its best candidates are rescored with whoosh's BM25F formula and the stored parameters, from
the per-term statistics Tantivy's explanation of each candidate gives (n, N, freq, dl, avgdl).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from typing import Any

import tantivy
from whoosh.analysis import STOP_WORDS
from whoosh.lang import has_stopwords, stopwords_for_language

from retrieval.analysis import (
    LOWER_LETTERS,
    PUNCT_SPLIT_PATTERN,
    UPPER_LETTERS,
    WHOOSH_DEFAULT_PATTERN,
    AnalyzerOptions,
)

# Candidates Tantivy ranks before the rescoring: enough that the rescored top 100 are stable.
RESCORE_CANDIDATES = 50
_CASE_CUT = re.compile(rf"(?<=[{LOWER_LETTERS}])(?=[{UPPER_LETTERS}])")
# whoosh's StopFilter drops tokens shorter than two characters: as stop words here.
_SINGLE_CHARACTERS = "abcdefghijklmnopqrstuvwxyz0123456789ßàáâãäåæçèéêëìíîïðñòóôõöøùúûüýþÿœ"


def tokenizer_name(language: str) -> str:
    """Return the name the analyzer of one language is registered under."""
    return f"trace_{language}"


def build_text_analyzer(language: str, options: AnalyzerOptions) -> Any:
    """Return the Tantivy analyzer equal to whoosh's ``build_analyzer`` (but œ folds to "oe")."""
    if options.stem:
        raise ValueError("stemming is not available with the tantivy BM25 engine")
    pattern = PUNCT_SPLIT_PATTERN if options.split_punct or options.split_case \
        else WHOOSH_DEFAULT_PATTERN
    builder = tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.regex(pattern)).filter(
        tantivy.Filter.lowercase())
    if options.stopwords and has_stopwords(language):
        stops = set(STOP_WORDS) | set(stopwords_for_language(language)) | set(_SINGLE_CHARACTERS)
        builder = builder.filter(tantivy.Filter.custom_stopword(sorted(stops)))
    if options.fold_accents:
        builder = builder.filter(tantivy.Filter.ascii_fold())
    return builder.build()


def prepare(text: str, options: AnalyzerOptions) -> str:
    """Cut glued words at a lowercase->uppercase boundary, the one step done in Python."""
    return _CASE_CUT.sub(" ", text) if options.split_case else text


def whoosh_bm25(n: float, total: float, freq: float, length: float, average: float,
                k1: float, b: float) -> float:
    """Return one term's BM25F score as whoosh computes it (its idf, our k1 and b)."""
    idf = math.log(total / (n + 1)) + 1
    return idf * (freq * (k1 + 1)) / (freq + k1 * ((1 - b) + b * length / max(average, 1e-9)))


def _term_nodes(node: dict) -> Iterator[dict]:
    if node.get("description", "").startswith("TermQuery"):
        yield node
        return
    for child in node.get("details", ()):
        yield from _term_nodes(child)


def _statistics(node: dict) -> dict[str, float]:
    found: dict[str, float] = {}
    stack = list(node.get("details", ()))
    while stack:
        child = stack.pop()
        name = child.get("description", "").split(",", 1)[0]
        if name in ("n", "N", "freq", "dl", "avgdl"):
            found[name] = float(child["value"])
        stack.extend(child.get("details", ()))
    return found


def rescored(query: Any, searcher: Any, address: Any, k1: float, b: float) -> float:
    """Return a candidate's score under whoosh's BM25F with parameters ``k1`` and ``b``."""
    explanation = json.loads(query.explain(searcher, address).to_json())
    score = 0.0
    for node in _term_nodes(explanation):
        s = _statistics(node)
        if {"n", "N", "freq", "dl", "avgdl"} <= s.keys():
            score += whoosh_bm25(s["n"], s["N"], s["freq"], s["dl"], s["avgdl"], k1, b)
    return score
