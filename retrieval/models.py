"""Retrieval-side tables derived from the archive and rebuilt when the corpus changes."""

from __future__ import annotations

from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.db import models


class VocabularyWord(models.Model):
    """One folded word (lower case, no accents) of the chunk texts and the chunks holding it."""

    word = models.TextField(primary_key=True)
    chunk_ids = ArrayField(models.BigIntegerField())

    class Meta:
        db_table = "retrieval_vocabulary"
        indexes = [
            GinIndex(name="vocabulary_word_trgm", fields=["word"], opclasses=["gin_trgm_ops"]),
        ]

    def __str__(self) -> str:
        return self.word


class VocabularyDocument(models.Model):
    """What one document put in the vocabulary: its chunk ids and words (to take them out)."""

    document_id = models.BigIntegerField(primary_key=True)
    chunk_ids = ArrayField(models.BigIntegerField())
    words = ArrayField(models.TextField())

    class Meta:
        db_table = "retrieval_vocabulary_document"

    def __str__(self) -> str:
        return f"document {self.document_id}: {len(self.words)} words"


class VocabularyStamp(models.Model):
    """The corpus state (revision, newest chunk) the vocabulary was built from; one row."""

    revision = models.BigIntegerField()
    last_chunk_id = models.BigIntegerField()
    built_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "retrieval_vocabulary_stamp"

    def __str__(self) -> str:
        return f"revision {self.revision}, chunk {self.last_chunk_id}"
