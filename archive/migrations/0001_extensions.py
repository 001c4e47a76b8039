from django.contrib.postgres.operations import TrigramExtension, UnaccentExtension
from django.db import migrations
from pgvector.django import VectorExtension


class Migration(migrations.Migration):
    initial = True
    dependencies = []
    operations = [VectorExtension(), TrigramExtension(), UnaccentExtension()]
