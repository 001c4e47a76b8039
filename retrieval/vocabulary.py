"""Vocabulary of folded chunk words, and the words of every chunk, kept current per document.

The substring channel matches query words against the vocabulary (trigram index on the word)
instead of computing trigram similarity over every 1,000-word chunk, then finds the chunks
holding the chosen words through `retrieval_chunk_words` (a row per chunk, GIN index on its
words). An outbox consumer (`drain`) replaces a changed document's rows and adds its new words;
the cost of an ingest is its own documents', whatever the size of the archive. A whole rebuild
(`refresh`) runs only when the vocabulary was never built or is found out of step at start-up
(`repair`). A query never rebuilds it.
"""

from __future__ import annotations

from django.db import connection, transaction

from archive import outbox

CONSUMER = "vocabulary"

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
# Every chunk gets a row, even one holding no word (repair compares chunk ids).
_CHUNK_WORDS_SQL = f"""
INSERT INTO retrieval_chunk_words (chunk_id, document_id, words)
SELECT c.id, c.document_id,
       coalesce(array_agg(DISTINCT w.word) FILTER (WHERE w.word IS NOT NULL), '{{{{}}}}')
FROM archive_chunk c LEFT JOIN LATERAL (
    SELECT word FROM regexp_split_to_table({FOLD_SQL.format("c.text")}, '{WORD_SPLIT}') AS t(word)
    WHERE word <> '' AND length(word) <= {MAX_WORD_LENGTH}
) w ON TRUE
{{where}}
GROUP BY c.id, c.document_id
"""
_NEW_WORDS_SQL = """
INSERT INTO retrieval_vocabulary (word)
SELECT DISTINCT unnest(words) FROM retrieval_chunk_words {where}
ON CONFLICT (word) DO NOTHING
"""
# The two word indexes as the migrations create them (`retrieval.models`), rebuilt by `refresh`.
_CHUNK_WORDS_INDEX_SQL = "CREATE INDEX chunk_words_gin ON retrieval_chunk_words USING gin (words)"
_WORDS_INDEX_SQL = (
    "CREATE INDEX vocabulary_word_trgm ON retrieval_vocabulary USING gin (word gin_trgm_ops)")
# Sort memory of a whole build's index creation.
BUILD_MEMORY = "512MB"
_STAMP_SQL = (
    "INSERT INTO retrieval_vocabulary_stamp (id, revision, last_chunk_id, built_at) "
    "VALUES (1, %s, %s, now()) ON CONFLICT (id) DO UPDATE SET "
    "revision = EXCLUDED.revision, last_chunk_id = EXCLUDED.last_chunk_id, "
    "built_at = EXCLUDED.built_at"
)


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
    """Rebuild the vocabulary unless another process just did; return whether this call did.

    A whole build runs when the vocabulary was never built (or by force): its word indexes are
    dropped and built once after the rows are in, far faster than row by row, and substring
    searches wait for the commit meanwhile.
    """
    with transaction.atomic(), connection.cursor() as cursor:
        # Concurrent callers queue here.
        cursor.execute("SELECT pg_advisory_xact_lock(%s)", [_LOCK_KEY])
        stamp = corpus_stamp()
        if not force and built_stamp() == stamp:
            return False
        cursor.execute(f"SET LOCAL maintenance_work_mem = '{BUILD_MEMORY}'")
        cursor.execute("TRUNCATE retrieval_vocabulary, retrieval_chunk_words")
        cursor.execute("DROP INDEX chunk_words_gin, vocabulary_word_trgm")
        cursor.execute(_CHUNK_WORDS_SQL.format(where=""))
        cursor.execute(_NEW_WORDS_SQL.format(where=""))
        cursor.execute(_CHUNK_WORDS_INDEX_SQL)
        cursor.execute(_WORDS_INDEX_SQL)
        cursor.execute(_STAMP_SQL, stamp)
        cursor.execute("ANALYZE retrieval_vocabulary, retrieval_chunk_words")
    return True


def apply_documents(document_ids: list[int]) -> int:
    """Replace the documents' chunk rows by their committed chunks; add new words; one commit.

    Idempotent. Words that only the replaced rows held leave the vocabulary.
    """
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s)", [_LOCK_KEY])  # not during a rebuild
        cursor.execute(
            "WITH gone AS (DELETE FROM retrieval_chunk_words WHERE document_id = ANY(%s) "
            "RETURNING words) SELECT coalesce(array_agg(DISTINCT w), '{}') "
            "FROM gone, unnest(gone.words) AS w", [document_ids])
        old_words = cursor.fetchone()[0]
        cursor.execute(_CHUNK_WORDS_SQL.format(where="WHERE c.document_id = ANY(%(ids)s)"),
                       {"ids": document_ids})
        cursor.execute(_NEW_WORDS_SQL.format(where="WHERE document_id = ANY(%(ids)s)"),
                       {"ids": document_ids})
        if old_words:
            cursor.execute(
                "DELETE FROM retrieval_vocabulary v WHERE v.word = ANY(%s) AND NOT EXISTS "
                "(SELECT 1 FROM retrieval_chunk_words cw WHERE cw.words @> ARRAY[v.word])",
                [old_words])
        # The stamp follows the applied changes, so `ensure_fresh` sees no reason to rebuild.
        cursor.execute(_STAMP_SQL, corpus_stamp())
    return len(document_ids)


def drain() -> int:
    """Apply the vocabulary's outbox marks (its registered consumer); build it if never built."""
    built = 0
    if built_stamp() is None:
        outbox.rebuild_covering(CONSUMER, lambda: refresh(force=True))
        built = 1
    return built + outbox.drain(CONSUMER, apply_documents)


def repair() -> str:
    """At start-up: build if never built; else re-apply only documents it holds wrongly."""
    if built_stamp() is None:
        refresh(force=True)
        return "built"
    with connection.cursor() as cursor:
        # A document is out of step when a chunk of it has no row, or a row has no chunk.
        cursor.execute(
            "SELECT DISTINCT coalesce(c.document_id, w.document_id) FROM archive_chunk c "
            "FULL JOIN retrieval_chunk_words w ON w.chunk_id = c.id "
            "WHERE c.id IS NULL OR w.chunk_id IS NULL")
        differing = [row[0] for row in cursor.fetchall()]
    for i in range(0, len(differing), outbox.DRAIN_BATCH):
        apply_documents(differing[i : i + outbox.DRAIN_BATCH])
    return f"repaired ({len(differing)} documents)" if differing else "up to date"


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
