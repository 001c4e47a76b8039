"""Give stored debate sections readable titles; the OCR head line moves to metadata.raw_title."""

from django.db import migrations


def retitle(apps, schema_editor):
    from archive.retitle import debate_sections_retitle

    debate_sections_retitle(document_model=apps.get_model("archive", "Document"))


class Migration(migrations.Migration):

    dependencies = [("archive", "0002_initial")]

    operations = [migrations.RunPython(retitle, migrations.RunPython.noop)]
