"""Retrieval-side tables derived from the archive and rebuilt when the corpus changes."""

from __future__ import annotations

from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.db import models


class VocabularyWord(models.Model):
    """One folded word (lower case, no accents) of the chunk texts, found by its trigrams."""

    word = models.TextField(primary_key=True)

    class Meta:
        db_table = "retrieval_vocabulary"
        indexes = [
            GinIndex(name="vocabulary_word_trgm", fields=["word"], opclasses=["gin_trgm_ops"]),
        ]

    def __str__(self) -> str:
        return self.word


class ChunkWords(models.Model):
    """The distinct folded words of one chunk; the GIN index on them finds a word's chunks.

    A row per chunk (no word: an empty array), written with the chunk's document and replaced
    with it, so an ingest touches only its own rows, whatever the size of the archive.
    """

    chunk_id = models.BigIntegerField(primary_key=True)
    document_id = models.BigIntegerField(db_index=True)
    words = ArrayField(models.TextField())

    class Meta:
        db_table = "retrieval_chunk_words"
        indexes = [GinIndex(name="chunk_words_gin", fields=["words"])]

    def __str__(self) -> str:
        return f"chunk {self.chunk_id}: {len(self.words)} words"


class VocabularyStamp(models.Model):
    """The corpus state (revision, newest chunk) the vocabulary was built from; one row."""

    revision = models.BigIntegerField()
    last_chunk_id = models.BigIntegerField()
    built_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "retrieval_vocabulary_stamp"

    def __str__(self) -> str:
        return f"revision {self.revision}, chunk {self.last_chunk_id}"
