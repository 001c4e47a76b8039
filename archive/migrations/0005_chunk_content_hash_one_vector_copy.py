"""Chunks carry their text's hash; the cache keeps only vectors no chunk holds; no trigram index.

The trigram GIN index on chunk text served no query: the substring channel matches words through
its vocabulary table and checks phrases with ``unaccent(text) ILIKE`` on candidates only.
"""

from django.db import migrations, models

BACKFILL = """
UPDATE archive_chunk SET content_hash = encode(sha256(convert_to(text, 'UTF8')), 'hex')
WHERE content_hash = ''
"""
# A cached vector that a chunk of the same text and model holds is a second copy.
DEDUPLICATE = """
DELETE FROM archive_embeddingcache e USING archive_chunk c
WHERE c.content_hash = e.content_hash AND c.embedding_model = e.model
  AND c.embedding IS NOT NULL
"""


class Migration(migrations.Migration):

    dependencies = [("archive", "0004_index_outbox")]

    operations = [
        migrations.RemoveIndex(model_name="chunk", name="chunk_text_trgm"),
        migrations.AddField(
            model_name="chunk", name="content_hash",
            field=models.CharField(blank=True, default="", max_length=64),
        ),
        migrations.RunSQL(BACKFILL, migrations.RunSQL.noop),
        migrations.AddIndex(
            model_name="chunk",
            index=models.Index(fields=["content_hash"], name="chunk_content_hash"),
        ),
        migrations.RunSQL(DEDUPLICATE, migrations.RunSQL.noop),
    ]
