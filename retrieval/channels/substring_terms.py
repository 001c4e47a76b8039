"""What a substring search asks, shared by its two ways of finding chunks.

A query is folded and split as chunk texts are (`retrieval.vocabulary`). Each query word of
`MIN_FUZZY_LENGTH` letters or more is mapped to its close variants in the vocabulary (pg_trgm
word similarity on a small indexed table), shorter words to themselves only. A chunk's fuzzy
score is the mean over query words, weighted by their trigram counts as pg_trgm does, of the
best variant it holds. Exact-phrase candidates hold every required word inside one of their
words; a phrase of several words or with punctuation is then checked in the chunk's text.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import connection, transaction

from common.sql import like_pattern
from retrieval import vocabulary

MODES = ("auto", "exact", "fuzzy")
# pg_trgm's default (0.6) misses OCR damage such as "dépntés" for "députés" (0.45). Results are
# ranked by similarity, so a lower bar costs little.
FUZZY_THRESHOLD = 0.4
# Per-word bar for variants: lower than the phrase threshold, because a badly damaged word
# ("laChanbre", 0.27 against "chambre") still adds to a phrase whose other words match well.
WORD_FLOOR = 0.25
# Words shorter than this match only themselves: trigram variants of "des" or "la" are noise.
MIN_FUZZY_LENGTH = 4
# Close variants kept per query word: enough for OCR damage, bounded for very common words.
MAX_VARIANTS = 50

# Each query word's variants and their similarity; `%%` because the caller passes parameters.
VARIANTS_SQL = """
SELECT q.n, q.weight, v.word, v.sim
FROM (
    SELECT word, n, length(word) + 1.0 AS weight
    FROM unnest(%(words)s::text[]) WITH ORDINALITY AS q(word, n)
) q CROSS JOIN LATERAL (
    SELECT vw.word, 1.0::real AS sim
    FROM retrieval_vocabulary vw
    WHERE length(q.word) < %(min_fuzzy_length)s AND vw.word = q.word
    UNION ALL
    (SELECT vw.word, word_similarity(q.word, vw.word) AS sim
     FROM retrieval_vocabulary vw
     WHERE length(q.word) >= %(min_fuzzy_length)s AND q.word <%% vw.word
     ORDER BY sim DESC, vw.word
     LIMIT %(max_variants)s)
) v
"""


def containing_words(words: list[str]) -> list[str]:
    """Return the query words that select exact-phrase candidates.

    Every word must occur inside some chunk word; short words occur almost everywhere and only
    cost time, so they are left to the phrase check unless nothing longer is.
    """
    long_words = [word for word in words if len(word) >= MIN_FUZZY_LENGTH]
    return long_words or [max(words, key=len)]


@dataclass(frozen=True)
class SubstringQuery:
    """A phrase as both ways of matching read it."""

    phrase: str
    words: list[str]  # distinct folded words, in order
    one_word: bool  # a single word of letters and digits: inside a chunk word or nowhere
    mode: str
    threshold: float

    @classmethod
    def parse(cls, text: str, mode: str, threshold: float) -> SubstringQuery | None:
        """Return the query of ``text``, or None when it holds no word."""
        if mode not in MODES:
            raise ValueError(f"unknown substring mode {mode!r}; expected one of {MODES}")
        phrase = " ".join(text.split())
        if not phrase:
            return None
        folded, words = vocabulary.fold_query(phrase)
        if not words:
            return None
        return cls(phrase, words, folded == words[0], mode, threshold)

    @property
    def contain_words(self) -> list[str]:
        return containing_words(self.words)

    @property
    def total_weight(self) -> float:
        return float(sum(len(word) + 1 for word in self.words))

    @property
    def pattern(self) -> str:
        """The phrase as an accent-insensitive ILIKE pattern (compared after `unaccent`)."""
        return like_pattern(self.phrase)

    @property
    def word_floor(self) -> float:
        return min(float(self.threshold), WORD_FLOOR)

    def sql_params(self) -> dict:
        """Named parameters of `VARIANTS_SQL` and of the SQL way."""
        return {
            "words": self.words,
            "contain_words": self.contain_words,
            "total_weight": self.total_weight,
            "max_variants": MAX_VARIANTS,
            "min_fuzzy_length": MIN_FUZZY_LENGTH,
            "one_word": self.one_word,
            "pattern": self.pattern,
            "threshold": float(self.threshold),
        }


def set_word_floor(cursor, query: SubstringQuery) -> None:
    """Lower pg_trgm's word-similarity bar for this transaction (the `<%` operator reads it)."""
    cursor.execute(f"SET LOCAL pg_trgm.word_similarity_threshold = {query.word_floor}")


def variants(query: SubstringQuery) -> list[list[tuple[str, float]]]:
    """Return, per query word, its variants with their share of the fuzzy score."""
    found: list[list[tuple[str, float]]] = [[] for _ in query.words]
    with transaction.atomic(), connection.cursor() as cursor:
        set_word_floor(cursor, query)
        cursor.execute(VARIANTS_SQL, query.sql_params())
        for n, weight, word, sim in cursor.fetchall():
            found[n - 1].append((word, float(weight) * float(sim) / query.total_weight))
    return found


def holding_words(query: SubstringQuery) -> list[list[str]]:
    """Return, per required word, the vocabulary words holding it."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT array(SELECT vw.word FROM retrieval_vocabulary vw "
            "WHERE vw.word LIKE '%%' || k.word || '%%') "
            "FROM unnest(%s::text[]) WITH ORDINALITY AS k(word, n) ORDER BY k.n",
            [query.contain_words])
        return [list(row[0]) for row in cursor.fetchall()]
