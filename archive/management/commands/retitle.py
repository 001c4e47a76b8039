"""Recompute the readable titles of stored debate sections (what a fresh import would give)."""

from __future__ import annotations

from django.core.management.base import BaseCommand
from django.db import transaction

from archive.retitle import debate_sections_retitle


class Command(BaseCommand):
    help = (
        "Give stored debate sections readable titles (date, item heading or first speaker) and "
        "keep the OCR's own head line in metadata.raw_title. Idempotent."
    )

    def handle(self, *args, **options):
        with transaction.atomic():
            changed = debate_sections_retitle()
        self.stdout.write(f"{changed} debate section(s) retitled.")
