"""Find the sentences of a chunk that a verdict rests on, in OCR-noisy French text.

A policy names its evidence by quoting it (a model) or by the words it matched (the rules).
`locate_quote` finds a quote in the chunk without caring for case, accents, spacing or
punctuation, then fuzzily (OCR noise, a model's small copying slips); `best_sentences` picks the
one to three sentences that carry most of the question's terms and names; `evidence_span` ties
both together and returns offsets into the document (the chunk's offset added).
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from difflib import SequenceMatcher
from functools import lru_cache

from agent.engine.text import TermMatcher
from agent.engine.types import EvidenceSpan
from common.search import Hit
from common.sentences import CAPITAL_AFTER, sentence_spans
from common.text import casefold_without_accents

MAX_CHARS = 400
MAX_SENTENCES = 3
MIN_QUOTE = 12  # folded letters and digits; shorter quotes are too ambiguous to place
FUZZY_RATIO = 0.75
HEADLINE_WORDS = 8

_CLAUSE_BREAK = re.compile(r"[;:,]\s")


def _trim(text: str, start: int, end: int) -> tuple[int, int]:
    """Drop the blanks around a span."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def _pieces(text: str, start: int, end: int, limit: int) -> list[tuple[int, int]]:
    """Cut an over-long sentence at clause breaks, else at blanks, into pieces of `limit`."""
    out = []
    while end - start > limit:
        window = text[start : start + limit]
        cut = max((m.end() for m in _CLAUSE_BREAK.finditer(window)), default=0)
        if cut < limit // 3:
            cut = window.rfind(" ") + 1
        if cut <= 0:
            cut = limit
        out.append(_trim(text, start, start + cut))
        start += cut
    out.append(_trim(text, start, end))
    return [(a, b) for a, b in out if b > a]


def sentences(text: str, limit: int = MAX_CHARS) -> list[tuple[int, int]]:
    """Return the chunk's sentences as (start, end) offsets, none longer than `limit`."""
    spans: list[tuple[int, int]] = []
    for a, b in sentence_spans(text, rules=CAPITAL_AFTER):
        spans.extend(_pieces(text, a, b, limit))
    return spans


# -- a quote -------------------------------------------------------------------------------


@lru_cache(maxsize=4096)
def _kept(char: str) -> str:
    """Return a character folded, keeping only its letters and digits."""
    return "".join(folded for folded in casefold_without_accents(char) if folded.isalnum())


def _normalised(text: str) -> tuple[str, list[int]]:
    """Fold text to its letters and digits, with each kept character's offset in the original."""
    letters: list[str] = []
    origin: list[int] = []
    for index, char in enumerate(text):
        kept = _kept(char)
        if kept:
            letters.append(kept)
            origin.extend([index] * len(kept))
    return "".join(letters), origin


def _fuzzy(haystack: str, needle: str) -> tuple[int, int] | None:
    """Find where a noisy copy of `needle` sits in `haystack` (normalised offsets), if anywhere.

    Shared trigrams vote for an alignment (position in haystack minus position in the needle);
    around the best-supported one, the matching blocks of the two strings give the region, kept
    when they cover at least FUZZY_RATIO of the needle.
    """
    if len(needle) < MIN_QUOTE or len(haystack) < 3:
        return None
    positions: dict[str, list[int]] = defaultdict(list)
    for i in range(len(haystack) - 2):
        positions[haystack[i : i + 3]].append(i)
    diagonals: Counter[int] = Counter()
    for j in range(len(needle) - 2):
        for i in positions.get(needle[j : j + 3], ()):
            diagonals[i - j] += 1
    if not diagonals:
        return None
    width = max(4, len(needle) // 10)  # insertions and deletions shift the alignment a little
    best = max(diagonals, key=lambda d: (sum(diagonals.get(d + k, 0)
                                             for k in range(-width, width + 1)), -d))
    slack = width + 5
    lo = max(0, best - slack)
    window = haystack[lo : max(lo, best + len(needle) + slack)]
    blocks = [b for b in SequenceMatcher(None, window, needle, autojunk=False)
              .get_matching_blocks() if b.size >= 3]
    if not blocks or sum(b.size for b in blocks) < FUZZY_RATIO * len(needle):
        return None
    first, last = blocks[0], blocks[-1]
    start = lo + max(0, first.a - first.b)
    end = lo + min(len(window), last.a + last.size + (len(needle) - last.b - last.size))
    return (start, end) if end > start else None


def locate_quote(text: str, quote: str) -> tuple[int, int, str] | None:
    """Find a quote in the text: (start, end, "exact" | "fuzzy"), or None when it is not there.

    Case, accents, blanks and punctuation are ignored, so a quote retyped without accents or
    with the OCR's broken spacing is still found exactly; otherwise the fuzzy search tolerates
    misread letters.
    """
    quote = quote.strip()
    verbatim = text.find(quote) if len(quote) >= MIN_QUOTE else -1
    if verbatim >= 0:
        return verbatim, verbatim + len(quote), "exact"
    needle, _ = _normalised(quote)
    if len(needle) < MIN_QUOTE:
        return None
    haystack, origin = _normalised(text)
    found = haystack.find(needle)
    if found >= 0:
        return origin[found], origin[found + len(needle) - 1] + 1, "exact"
    region = _fuzzy(haystack, needle)
    if region is None:
        return None
    start, end = region
    return origin[start], origin[end - 1] + 1, "fuzzy"


def _snap(text: str, start: int, end: int, limit: int) -> tuple[int, int]:
    """Widen a located quote to the whole sentences it touches, when they fit in `limit`."""
    touched = [(a, b) for a, b in _matchers(text, limit)[0] if a < end and b > start]
    if touched and touched[-1][1] - touched[0][0] <= limit:
        return touched[0][0], touched[-1][1]
    if end - start <= limit:
        return _trim(text, start, end)
    cut = text.rfind(" ", start, start + limit)
    return _trim(text, start, cut if cut > start else start + limit)


# -- the best sentences ---------------------------------------------------------------------


@lru_cache(maxsize=256)
def _matchers(text: str, limit: int) -> tuple[list[tuple[int, int]], list[TermMatcher]]:
    """Split a chunk into sentences with one term matcher each (kept: chunks come back often)."""
    spans = sentences(text, limit)
    return spans, [TermMatcher(text[a:b]) for a, b in spans]


def best_sentences(text: str, terms: Sequence[str], names: Sequence[str] = (), *,
                   limit: int = MAX_CHARS, most: int = MAX_SENTENCES) -> tuple[int, int]:
    """Pick the one to three neighbouring sentences that carry most of the terms and names.

    `terms` and `names` are folded. A name counts twice a term. The best sentence is widened by
    a neighbour while the neighbour adds a term or name not yet covered and the whole stays
    within `limit`; a chunk that matches nothing gives its opening sentence.
    """
    spans, matchers = _matchers(text, limit)
    if not spans:
        return _trim(text, 0, min(len(text), limit))
    found = [({t for t in terms if matcher.matches(t)}, {n for n in names if matcher.matches(n)})
             for matcher in matchers]

    def weight(index: int, covered: tuple[set[str], set[str]] = (set(), set())) -> int:
        words, people = found[index]
        return len(words - covered[0]) + 2 * len(people - covered[1])

    # On a tie, a sentence beats a headline: the headline names the topic, the sentence says it.
    weights = [weight(i) for i in range(len(spans))]
    tied = [i for i, w in enumerate(weights) if w == max(weights)]
    best = next((i for i in tied if not _is_headline(text, *spans[i])), tied[0])
    first = last = best
    covered = (set(found[best][0]), set(found[best][1]))
    while last - first + 1 < most:
        options = [i for i in (first - 1, last + 1) if 0 <= i < len(spans)
                   and max(spans[last][1], spans[i][1]) - min(spans[first][0], spans[i][0])
                   <= limit and weight(i, covered) > 0]
        if not options:
            break
        pick = max(options, key=lambda i: (weight(i, covered), -i))
        first, last = min(first, pick), max(last, pick)
        covered[0].update(found[pick][0])
        covered[1].update(found[pick][1])
    return spans[first][0], spans[last][1]


def _is_headline(text: str, start: int, end: int) -> bool:
    """Tell whether a span reads as a headline: a few words, or mostly capitals."""
    words = text[start:end].split()
    letters = [c for c in text[start:end] if c.isalpha()]
    capitals = sum(1 for c in letters if c.isupper())
    return len(words) < HEADLINE_WORDS or (bool(letters) and capitals > 0.6 * len(letters))


def most_terms_in_a_sentence(text: str, terms: Sequence[str], *,
                             limit: int = MAX_CHARS) -> int:
    """Return how many of the (folded) terms the richest single sentence of the text holds."""
    _, matchers = _matchers(text, limit)
    return max((len(matcher.matched(terms)) for matcher in matchers), default=0)


def evidence_span(hit: Hit, *, quote: str = "", terms: Sequence[str] = (),
                  names: Sequence[str] = (), limit: int = MAX_CHARS) -> EvidenceSpan | None:
    """Locate a verdict's evidence in a hit's chunk, with offsets into the document.

    The quote is tried first; when it is missing or cannot be found, the best sentences for the
    terms and names stand in. None for a hit without text.
    """
    text = hit.text
    if not text.strip():
        return None
    located = locate_quote(text, quote) if quote.strip() else None
    if located is not None:
        start, end, method = located
        start, end = _snap(text, start, end, limit)
    else:
        start, end = best_sentences(text, terms, names, limit=limit)
        method = "sentences"
    offset = hit.chunk_start
    return EvidenceSpan(start=offset + start, end=offset + end, text=text[start:end],
                        method=method)
