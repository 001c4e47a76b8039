"""Vocabulary of folded chunk words with the chunks holding them, rebuilt when the corpus changes.

The substring channel matches query words against this small table (trigram index on the word)
instead of computing trigram similarity over every 1,000-word chunk.
"""

from __future__ import annotations

from django.db import connection, transaction

# Same folding and splitting for chunk texts and queries: lower case, accents removed, runs of
# letters and digits. OCR-glued words ("laChambre") stay one word; matching finds them by trigrams.
FOLD_SQL = "lower(unaccent({}))"
WORD_SPLIT = "[^[:alnum:]]+"
# A btree key must fit in a page; longer "words" are OCR noise nobody searches for.
MAX_WORD_LENGTH = 200
# pg_advisory_xact_lock key serialising rebuilds across processes ("tracev" in ASCII).
_LOCK_KEY = 0x7472_6163_6576

_CORPUS_STAMP_SQL = (
    "coalesce((SELECT revision FROM archive_corpusrevision WHERE id = 1), 0), "
    "coalesce((SELECT max(id) FROM archive_chunk), 0)"
)
_BUILD_SQL = f"""
INSERT INTO retrieval_vocabulary (word, chunk_ids)
SELECT w.word, array_agg(DISTINCT c.id)
FROM archive_chunk c,
     regexp_split_to_table({FOLD_SQL.format("c.text")}, '{WORD_SPLIT}') AS w(word)
WHERE w.word <> '' AND length(w.word) <= {MAX_WORD_LENGTH}
GROUP BY w.word
"""


def corpus_stamp() -> tuple[int, int]:
    """Return the corpus revision and the newest chunk id (catches chunks added without a bump)."""
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {_CORPUS_STAMP_SQL}")
        return tuple(cursor.fetchone())


def built_stamp() -> tuple[int, int] | None:
    """Return the stamp the vocabulary was built from, or None if it was never built."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT revision, last_chunk_id FROM retrieval_vocabulary_stamp WHERE id = 1"
        )
        row = cursor.fetchone()
    return (row[0], row[1]) if row else None


def ensure_fresh() -> bool:
    """Rebuild the vocabulary if the corpus changed since it was built; return whether it did."""
    with connection.cursor() as cursor:
        # One round trip on the hot path: both stamps side by side.
        cursor.execute(
            f"SELECT {_CORPUS_STAMP_SQL}, b.revision, b.last_chunk_id "
            "FROM (SELECT 1) one LEFT JOIN retrieval_vocabulary_stamp b ON b.id = 1"
        )
        revision, last_chunk_id, built_revision, built_last_chunk_id = cursor.fetchone()
    if (revision, last_chunk_id) == (built_revision, built_last_chunk_id):
        return False
    return refresh()


def refresh(*, force: bool = False) -> bool:
    """Rebuild the vocabulary unless another process just did; return whether this call did."""
    with transaction.atomic(), connection.cursor() as cursor:
        # Concurrent callers queue here; readers keep seeing the previous vocabulary until commit
        # (DELETE rather than TRUNCATE, which would block them).
        cursor.execute("SELECT pg_advisory_xact_lock(%s)", [_LOCK_KEY])
        stamp = corpus_stamp()
        if not force and built_stamp() == stamp:
            return False
        cursor.execute("DELETE FROM retrieval_vocabulary")
        cursor.execute(_BUILD_SQL)
        cursor.execute(
            "INSERT INTO retrieval_vocabulary_stamp (id, revision, last_chunk_id, built_at) "
            "VALUES (1, %s, %s, now()) ON CONFLICT (id) DO UPDATE SET "
            "revision = EXCLUDED.revision, last_chunk_id = EXCLUDED.last_chunk_id, "
            "built_at = EXCLUDED.built_at",
            stamp,
        )
        cursor.execute("ANALYZE retrieval_vocabulary")
    return True


def fold_query(text: str) -> tuple[str, list[str]]:
    """Return the folded query and its distinct folded words, in order, split as chunk texts are."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {FOLD_SQL.format('%s')}, array(SELECT w FROM regexp_split_to_table("
            f"{FOLD_SQL.format('%s')}, '{WORD_SPLIT}') WITH ORDINALITY AS t(w, n) "
            "WHERE w <> '' ORDER BY n)",
            [text, text],
        )
        folded, words = cursor.fetchone()
    return folded, list(dict.fromkeys(words))
