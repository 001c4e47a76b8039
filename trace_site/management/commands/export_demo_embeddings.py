"""Write the demo archive's chunk vectors to the file ``serve`` loads them from on a first start."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from archive.embeddings import PROVIDERS, get_provider
from trace_site.demo_archive import DEMO_CORPUS_FILES, demo_vectors_export


class Command(BaseCommand):
    help = ("Write the vectors of the loaded demo documents' chunks (one provider) to "
            "demo/historiqa/embeddings-<provider>.npz, where a first start finds them.")

    def add_arguments(self, parser):
        parser.add_argument("paths", nargs="*", type=Path,
                            help="corpus files whose documents to export (default: the demo's)")
        parser.add_argument("--provider", choices=PROVIDERS,
                            help="embedding provider (default: TRACE_EMBEDDING_PROVIDER)")
        parser.add_argument("--out", type=Path, help="the file to write (default: beside the "
                                                     "demo corpus, named by the provider)")

    def handle(self, *args, **options):
        try:
            model = get_provider(options["provider"]).name
            out, written, found, total = demo_vectors_export(
                model, paths=options["paths"] or DEMO_CORPUS_FILES, out=options["out"])
        except (FileNotFoundError, ValueError) as exc:
            raise CommandError(str(exc)) from exc
        if not written:
            raise CommandError(f"No chunk of the {total} documents holds a vector of {model}: "
                               "load them first (manage.py ingest).")
        self.stdout.write(f"{written} vectors of {model} from {found} of {total} documents "
                          f"written to {out}.")
