"""Import an investigation file written by `export_investigation` (or the review page)."""

from __future__ import annotations

from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from agent.investigations import services
from agent.investigations.investigation_file import MAX_FILE_BYTES, InvestigationFileError


class Command(BaseCommand):
    help = "Import an investigation file as a new investigation of a user; documents are " \
           "matched by key and content hash, and those missing here are reported."

    def add_arguments(self, parser):
        parser.add_argument("file", help="the investigation file")
        parser.add_argument("--owner", required=True, help="user name of the new owner")

    def handle(self, *args, **options):
        owner = get_user_model().objects.filter(username=options["owner"]).first()
        if owner is None:
            raise CommandError(f"No user {options['owner']!r}.")
        path = Path(options["file"])
        if not path.is_file():
            raise CommandError(f"No file {path}.")
        if path.stat().st_size > MAX_FILE_BYTES:
            raise CommandError(f"{path} has more than {MAX_FILE_BYTES:,} bytes.")
        try:
            result = services.investigation_import(owner=owner, data=path.read_bytes())
        except InvestigationFileError as exc:
            raise CommandError(f"{path} was not imported, nothing was written: {exc}") from exc
        self.stdout.write(f"Imported as investigation {result.investigation.pk}.")
        for key, reason in result.missing_documents.items():
            self.stdout.write(f"Missing document {key}: {reason}.")
        if result.unmatched_chunks:
            self.stdout.write(f"{result.unmatched_chunks} passage(s) have no counterpart here.")
        if result.other_authors:
            self.stdout.write("Kept without an author (no such user here is the owner): "
                              + ", ".join(result.other_authors) + ".")
