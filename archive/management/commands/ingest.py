"""Import a corpus file or folder into the archive."""

from __future__ import annotations

import os
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from archive.embeddings import PROVIDERS
from archive.importers import FORMATS
from archive.importers.iiif_manifest import manifest_problem
from archive.importers.records import FolderOptions
from archive.outbox import ApplyFailed, apply_pending
from archive.services import ON_ERROR, IngestFailed, IngestRefused, ingest_file


class Command(BaseCommand):
    help = (
        "Import PATH: a shared-layout corpus.jsonl, an official HistoriQA corpus_dataset.jsonl, "
        "a folder of .txt files (with --metadata CSV), or a folder of ALTO .xml pages (grouped "
        "by its METS files, by the --metadata CSV's issue column, or one document per page). "
        "Re-running is idempotent. By default a single bad record refuses the whole import and "
        "nothing is written."
    )

    def add_arguments(self, parser):
        parser.add_argument("path")
        parser.add_argument("--format", choices=FORMATS, default="auto")
        parser.add_argument("--metadata", help="CSV of per-file metadata for a .txt or ALTO folder")
        parser.add_argument("--sub-corpus", default="",
                            help="ALTO folder: the sub-corpus's name where the METS or CSV name "
                                 "none (default: the folder's name)")
        parser.add_argument("--genre", default="",
                            help="ALTO folder: press, debates or other, where the CSV says none "
                                 "(default: guessed from the sub-corpus's name)")
        parser.add_argument("--title", default="",
                            help="ALTO folder: the name documents the METS or CSV do not title "
                                 "are titled by, with their date (default: their external id)")
        parser.add_argument("--iiif-manifest", default="",
                            help="ALTO folder: a IIIF Presentation 2 or 3 manifest FILE naming "
                                 "the pages' images (never a URL: the server fetches nothing)")
        parser.add_argument("--on-error", choices=ON_ERROR, default="refuse",
                            help="refuse (default): import nothing if any record is bad, and "
                                 "write in one transaction; skip: import the valid records "
                                 "and list the bad ones")
        parser.add_argument("--no-embed", action="store_true", help="store chunks without vectors")
        parser.add_argument("--provider", choices=PROVIDERS,
                            help="embedding provider (default: TRACE_EMBEDDING_PROVIDER)")
        parser.add_argument("--batch-size", type=int, default=25, help="documents per transaction")
        parser.add_argument("--commit-every-batch", action="store_true",
                            help="with --on-error refuse: commit batch by batch (a big file; a "
                                 "rerun after a kill skips what was committed) instead of one "
                                 "transaction; bad records still refuse the file before any write")
        parser.add_argument("--workers", type=int, default=os.cpu_count() or 1,
                            help="embedding processes working ahead of the writes (0: embed in "
                                 "this process)")

    def handle(self, *args, **options):
        manifest = options["iiif_manifest"].strip()
        if problem := manifest_problem(manifest):
            raise CommandError(problem)
        try:
            report = ingest_file(
                path=options["path"], fmt=options["format"], metadata_csv=options["metadata"],
                on_error=options["on_error"], embed=not options["no_embed"],
                provider=options["provider"], batch_size=options["batch_size"],
                progress=options["verbosity"] > 0,
                commit_every_batch=options["commit_every_batch"], workers=options["workers"],
                defaults=FolderOptions(sub_corpus=options["sub_corpus"].strip(),
                                        genre=options["genre"].strip(),
                                        title=" ".join(options["title"].split()),
                                        iiif_manifest=Path(manifest) if manifest else None),
            )
        except (IngestRefused, IngestFailed) as exc:
            raise CommandError(str(exc)) from exc
        except (FileNotFoundError, ValueError) as exc:
            raise CommandError(str(exc)) from exc
        try:
            # Also replays marks an earlier run left behind (a crash before its indexes caught up).
            for name, count in apply_pending().items():
                report.indexed[name] = report.indexed.get(name, 0) + count
        except ApplyFailed as exc:
            self.stderr.write(f"The import is committed, but an index is behind: {exc}. "
                              "It catches up at the next start or with `manage.py reindex`.")
        self.stdout.write(report.summary())
