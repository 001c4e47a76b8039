"""Vocabulary of folded chunk words with the chunks holding them, kept current per document.

The substring channel matches query words against this small table (trigram index on the word)
instead of computing trigram similarity over every 1,000-word chunk. An outbox consumer
(`drain`) takes a changed document's old chunks out of its old words and adds its current
chunks; a whole rebuild (`refresh`) runs only when the vocabulary was never built or is found
out of step at start-up (`repair`). A query never rebuilds it.
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
_WORDS_SQL = f"""
SELECT c.document_id, c.id AS chunk_id, w.word
FROM archive_chunk c,
     regexp_split_to_table({FOLD_SQL.format("c.text")}, '{WORD_SPLIT}') AS w(word)
WHERE w.word <> '' AND length(w.word) <= {MAX_WORD_LENGTH} {{where}}
"""
_BUILD_SQL = f"""
INSERT INTO retrieval_vocabulary (word, chunk_ids)
SELECT word, array_agg(DISTINCT chunk_id) FROM ({_WORDS_SQL.format(where="")}) w GROUP BY word
"""
# Every document with chunks gets a row, even one whose chunks hold no word (repair compares them).
_DOCUMENTS_SQL = """
SELECT c.document_id, array_agg(DISTINCT c.id),
       coalesce(array_agg(DISTINCT w.word) FILTER (WHERE w.word IS NOT NULL), '{{}}')
FROM archive_chunk c LEFT JOIN w ON w.chunk_id = c.id
{where} GROUP BY c.document_id
"""
_BUILD_DOCUMENTS_SQL = f"""
WITH w AS ({_WORDS_SQL.format(where="")})
INSERT INTO retrieval_vocabulary_document (document_id, chunk_ids, words)
{_DOCUMENTS_SQL.format(where="")}
"""
# One statement adds the current chunks of some documents: to their words, and to their record.
_ADD_SQL = f"""
WITH w AS ({_WORDS_SQL.format(where="AND c.document_id = ANY(%(ids)s)")}),
added AS (
    INSERT INTO retrieval_vocabulary (word, chunk_ids)
    SELECT word, array_agg(DISTINCT chunk_id) FROM w GROUP BY word
    ON CONFLICT (word) DO UPDATE
    SET chunk_ids = array(SELECT DISTINCT x FROM
                          unnest(retrieval_vocabulary.chunk_ids || EXCLUDED.chunk_ids) AS x)
)
INSERT INTO retrieval_vocabulary_document (document_id, chunk_ids, words)
{_DOCUMENTS_SQL.format(where="WHERE c.document_id = ANY(%(ids)s)")}
"""
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
    """Rebuild the vocabulary unless another process just did; return whether this call did."""
    with transaction.atomic(), connection.cursor() as cursor:
        # Concurrent callers queue here; readers keep seeing the previous vocabulary until commit
        # (DELETE rather than TRUNCATE, which would block them).
        cursor.execute("SELECT pg_advisory_xact_lock(%s)", [_LOCK_KEY])
        stamp = corpus_stamp()
        if not force and built_stamp() == stamp:
            return False
        cursor.execute("DELETE FROM retrieval_vocabulary")
        cursor.execute("DELETE FROM retrieval_vocabulary_document")
        cursor.execute(_BUILD_SQL)
        cursor.execute(_BUILD_DOCUMENTS_SQL)
        cursor.execute(_STAMP_SQL, stamp)
        cursor.execute("ANALYZE retrieval_vocabulary")
    return True


def apply_documents(document_ids: list[int]) -> int:
    """Replace what the documents put in the vocabulary by their committed chunks; one commit.

    Idempotent: the document's recorded chunks are taken out of its recorded words first.
    """
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s)", [_LOCK_KEY])  # not during a rebuild
        cursor.execute(
            "DELETE FROM retrieval_vocabulary_document WHERE document_id = ANY(%s) "
            "RETURNING chunk_ids, words", [document_ids])
        old_chunks: set[int] = set()
        old_words: set[str] = set()
        for chunk_ids, words in cursor.fetchall():
            old_chunks.update(chunk_ids)
            old_words.update(words)
        if old_words:
            words = sorted(old_words)
            cursor.execute(
                "UPDATE retrieval_vocabulary SET chunk_ids = array("
                "SELECT x FROM unnest(chunk_ids) AS x WHERE NOT x = ANY(%s)) "
                "WHERE word = ANY(%s)", [sorted(old_chunks), words])
            cursor.execute("DELETE FROM retrieval_vocabulary "
                           "WHERE word = ANY(%s) AND cardinality(chunk_ids) = 0", [words])
        cursor.execute(_ADD_SQL, {"ids": document_ids})
        # The stamp follows the applied changes, so `ensure_fresh` sees no reason to rebuild.
        cursor.execute(_STAMP_SQL, corpus_stamp())
    return len(document_ids)


def drain() -> int:
    """Apply the vocabulary's outbox marks (its registered consumer); build it if never built."""
    built = 0
    if built_stamp() is None:
        refresh(force=True)
        built = 1
    return built + outbox.drain(CONSUMER, apply_documents)


def repair() -> str:
    """At start-up: build if never built; else re-apply only documents it holds wrongly."""
    if built_stamp() is None:
        refresh(force=True)
        return "built"
    with connection.cursor() as cursor:
        # A document is out of step when the chunk ids it holds are not its current ones.
        cursor.execute(
            "SELECT coalesce(a.document_id, v.document_id) FROM "
            "(SELECT document_id, array_agg(id ORDER BY id) AS ids FROM archive_chunk "
            " GROUP BY document_id) a "
            "FULL JOIN retrieval_vocabulary_document v USING (document_id) "
            "WHERE a.ids IS DISTINCT FROM "
            "(SELECT array_agg(x ORDER BY x) FROM unnest(v.chunk_ids) AS x)")
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
