"""Scanned documents keep their OCR confidence and layout; chunks their OCR confidence."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [("archive", "0005_chunk_content_hash_one_vector_copy")]

    operations = [
        migrations.AddField(
            model_name="document", name="ocr_confidence",
            field=models.FloatField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="document", name="layout",
            field=models.JSONField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="chunk", name="ocr_confidence",
            field=models.FloatField(blank=True, null=True),
        ),
    ]
