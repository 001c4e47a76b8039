"""Documents may name the IIIF image or manifest of their scan."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [("archive", "0006_ocr_confidence_and_layout")]

    operations = [
        migrations.AddField(
            model_name="document", name="iiif_url",
            field=models.CharField(blank=True, default="", max_length=500),
        ),
    ]
