"""Write an investigation as one file (`agent/investigations/investigation_file.py`)."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from agent.investigations.investigation_file import investigation_file
from agent.models import Investigation


class Command(BaseCommand):
    help = "Write an investigation (verdicts, overrides, notes, quotes, order, answer drafts, " \
           "prompts and replies) as one versioned JSON file."

    def add_arguments(self, parser):
        parser.add_argument("investigation", type=int, help="the investigation's id")
        parser.add_argument("--out", required=True, help="the file to write")

    def handle(self, *args, **options):
        investigation = Investigation.objects.filter(pk=options["investigation"]).first()
        if investigation is None:
            raise CommandError(f"No investigation {options['investigation']}.")
        if investigation.is_active:
            raise CommandError(f"Investigation {investigation.pk} is still {investigation.status}:"
                               " export it once it has ended.")
        data = investigation_file(investigation)
        Path(options["out"]).write_bytes(data)
        self.stdout.write(f"Investigation {investigation.pk} written to {options['out']} "
                          f"({len(data):,} bytes).")
