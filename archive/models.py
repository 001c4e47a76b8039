"""Archive models: sub-corpora, documents with citation metadata, and their chunks."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from pgvector.django import HnswIndex, VectorField

from archive.layout import DocumentLayout
from common.document_keys import document_key

# Every provider's vectors are stored at this width: shorter ones are zero-padded (cosine is
# unchanged), longer ones are requested or truncated at this size (see archive/embeddings).
EMBEDDING_DIMENSIONS = 512


class SubCorpus(models.Model):
    class Genre(models.TextChoices):
        PRESS = "press", "press"
        DEBATES = "debates", "parliamentary debates"
        OTHER = "other", "other"

    slug = models.SlugField(max_length=100, unique=True)
    name = models.CharField(max_length=200)
    genre = models.CharField(max_length=20, choices=Genre.choices, default=Genre.OTHER)
    language = models.CharField(max_length=10, default="fr")
    description = models.TextField(blank=True)

    class Meta:
        ordering = ["slug"]
        verbose_name_plural = "sub-corpora"

    def __str__(self) -> str:
        return self.name


class Document(models.Model):
    class DatePrecision(models.TextChoices):
        DAY = "day", "day"
        MONTH = "month", "month"
        YEAR = "year", "year"

    sub_corpus = models.ForeignKey(SubCorpus, on_delete=models.CASCADE, related_name="documents")
    external_id = models.CharField(max_length=300)
    title = models.CharField(max_length=500, blank=True)
    publication = models.CharField(max_length=300, blank=True)
    date = models.DateField(null=True, blank=True)
    date_precision = models.CharField(
        max_length=10, choices=DatePrecision.choices, blank=True, default=""
    )
    page = models.CharField(max_length=100, blank=True, help_text="page or section")
    url = models.URLField(max_length=500, blank=True, help_text="URL or ark identifier")
    # A IIIF Image API base or manifest of the scan, checked at import (archive/iiif.py) and
    # never fetched by the server; pages of an ALTO issue may carry their own (layout "image").
    iiif_url = models.CharField(max_length=500, blank=True, default="")
    metadata = models.JSONField(default=dict, blank=True)
    text = models.TextField()
    content_hash = models.CharField(max_length=64)
    # Scanned documents (ALTO): mean word confidence (0-1) and where the text sits on the pages
    # (archive/layout.py: DocumentLayout.to_json); both null for documents imported as text.
    ocr_confidence = models.FloatField(null=True, blank=True)
    layout = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["sub_corpus__slug", "date", "external_id"]
        constraints = [
            models.UniqueConstraint(
                fields=["sub_corpus", "external_id"], name="document_unique_external_id"
            )
        ]
        indexes = [models.Index(fields=["date"]), models.Index(fields=["sub_corpus", "date"])]

    def __str__(self) -> str:
        return self.key

    def document_layout(self) -> DocumentLayout | None:
        """The stored layout as its typed record (None for documents imported as text)."""
        return DocumentLayout.from_json(self.layout) if self.layout is not None else None

    @property
    def key(self) -> str:
        """Global identifier: `<sub-corpus slug>:<external id>`."""
        return document_key(self.sub_corpus.slug, self.external_id)


class Chunk(models.Model):
    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="chunks")
    ordinal = models.PositiveIntegerField()
    text = models.TextField()
    char_start = models.PositiveIntegerField()
    char_end = models.PositiveIntegerField()
    token_count = models.PositiveIntegerField()
    # Mean confidence of the OCR words starting inside the chunk (archive/layout.py: layout_span).
    ocr_confidence = models.FloatField(null=True, blank=True)
    # SHA-256 of `text`: the key under which its vector is reused.
    content_hash = models.CharField(max_length=64, blank=True, default="")
    embedding = VectorField(dimensions=EMBEDDING_DIMENSIONS, null=True, blank=True)
    embedding_model = models.CharField(max_length=200, blank=True)

    class Meta:
        ordering = ["document_id", "ordinal"]
        constraints = [
            models.UniqueConstraint(fields=["document", "ordinal"], name="chunk_unique_ordinal")
        ]
        indexes = [
            HnswIndex(
                name="chunk_embedding_hnsw",
                fields=["embedding"],
                m=16,
                ef_construction=64,
                opclasses=["vector_cosine_ops"],
            ),
            # Vectors are looked up by text hash (see archive/embeddings/cache.py).
            models.Index(name="chunk_content_hash", fields=["content_hash"]),
        ]

    def __str__(self) -> str:
        return f"{self.document_id}#{self.ordinal}"


class EmbeddingCache(models.Model):
    """Vectors by content hash and model that no chunk holds (see archive/embeddings/cache.py)."""

    content_hash = models.CharField(max_length=64)
    model = models.CharField(max_length=200)
    vector = VectorField(dimensions=EMBEDDING_DIMENSIONS)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["content_hash", "model"], name="embedding_cache_key")
        ]


class CorpusRevision(models.Model):
    """A counter bumped by every change to the archive; search indexes are stamped with it."""

    revision = models.PositiveBigIntegerField(default=0)
    updated_at = models.DateTimeField(auto_now=True)

    @classmethod
    def current(cls) -> int:
        row = cls.objects.filter(pk=1).first()
        return row.revision if row else 0


class IndexOutbox(models.Model):
    """A document whose rows changed, waiting to be applied by one derived index (consumer)."""

    consumer = models.CharField(max_length=100)
    # No foreign key: the mark of a deleted document must outlive it.
    document_id = models.BigIntegerField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["consumer", "id"], name="index_outbox_consumer")]

    def __str__(self) -> str:
        return f"{self.consumer}: document {self.document_id}"


class ChunkCorrection(models.Model):
    """A historian's correction of a chunk's OCR: a new row each time, the newest in force.

    The correction replaces the chunk's text as a whole (`Chunk.text`, searched and embedded from
    then on); the document's text, and so every offset into it, stays the OCR's
    (`archive/corrections.py` maps offsets between the two). `original_text` is the text it
    replaced: the OCR's for a first correction, the previous correction's for the next ones.
    """

    chunk = models.ForeignKey(Chunk, on_delete=models.CASCADE, related_name="corrections")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL,
                             related_name="+")
    original_text = models.TextField()
    text = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["chunk_id", "-created_at", "-id"]

    def __str__(self) -> str:
        return f"correction of chunk {self.chunk_id}"
