"""Send the hostile cases of measurement.hardening and write what came back to docs/hardening.md."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from django.db import connection
from django.test.utils import setup_test_environment, teardown_test_environment

from measurement import hardening


class Command(BaseCommand):
    help = ("Try the hostile cases (requests, folders, IIIF URLs, raw requests to a web process) "
            "on a throwaway test database and write their answers as Markdown.")

    def add_arguments(self, parser):
        parser.add_argument("--markdown", metavar="FILE", default="docs/hardening.md")

    def handle(self, *args, **options):
        command = "python manage.py hardening_report " + shlex.join(a for a in sys.argv[2:] if a)
        setup_test_environment()
        original = connection.settings_dict["NAME"]
        connection.creation.create_test_db(verbosity=0, autoclobber=True, serialize=False)
        try:
            cases = hardening.application_cases()
        finally:
            connection.creation.destroy_test_db(original, verbosity=0)
            teardown_test_environment()
        cases += [*hardening.import_cases(), hardening.alto_memory_case(),
                  *hardening.iiif_cases()]
        cases += hardening.server_cases(hardening.spawn_web_process)
        page = hardening.report(cases, command=command.strip())
        Path(options["markdown"]).write_text(page, encoding="utf-8")
        self.stdout.write(page)
        if failed := [case for case in cases if not case.held]:
            raise CommandError(f"{len(failed)} case(s) did not get the answer expected: "
                               + "; ".join(case.sent for case in failed))
