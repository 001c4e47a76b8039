"""Celery tasks of the archive: thin wrappers that call a service."""

from celery import shared_task

from archive.embedding_backfill import chunks_embed
from archive.embeddings import get_provider


@shared_task(name="archive.embed_document", acks_late=True)
def embed_document(document_id: int) -> int:
    """Embed the chunks of one document that lack a vector (after an OCR correction)."""
    embedded, _ = chunks_embed(provider=get_provider(), document_ids=[document_id])
    return embedded
