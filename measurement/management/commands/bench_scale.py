"""Build synthetic archives of growing size, measure them, and write docs/scale.md."""

from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys
from pathlib import Path

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError

from measurement.scale.measure import SizePlan, run_size
from measurement.scale.report import write_report
from measurement.scale.results import SizeResults
from trace_site import embedded

ROOT = Path(settings.BASE_DIR)


class Command(BaseCommand):
    help = (
        "Measure TRACE on synthetic archives of each --sizes (chunks), each in its own data "
        "directory under --work-dir (never the app's database), then write --docs and its plot. "
        "Resumable: rerun the same command and finished stages are kept, an interrupted ingest "
        "skips the documents already committed."
    )

    def add_arguments(self, parser):
        parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
        parser.add_argument("--work-dir", required=True,
                            help="where archives, inputs and results are kept (outside the repo)")
        parser.add_argument("--docs", default=str(ROOT / "docs" / "scale.md"))
        parser.add_argument("--corpus", default=str(ROOT / "demo" / "historiqa" / "corpus.jsonl"))
        parser.add_argument("--questions",
                            default=str(ROOT / "demo" / "historiqa" / "questions_dev.jsonl"))
        parser.add_argument("--workers", type=int, default=2, help="embedding processes")
        parser.add_argument("--queries", type=int, default=40, help="dev questions timed")
        parser.add_argument("--maintenance-work-mem", default="2GB")
        parser.add_argument("--bm25-engine", choices=("whoosh", "tantivy"),
                            default=settings.TRACE_BM25_ENGINE,
                            help="the BM25 engine of the measured archives")
        parser.add_argument("--report-only", action="store_true",
                            help="write --docs from the results already measured")
        parser.add_argument("--note", help="add a note on how one size was measured (with one "
                            "--sizes) to its results and the report, then write the report")
        parser.add_argument("--run-size", type=int, help=argparse_hidden())

    def handle(self, *args, **options):
        work_dir = Path(options["work_dir"]).resolve()
        if work_dir.is_relative_to(ROOT):
            raise CommandError("--work-dir must be outside the repository")
        if options["run_size"]:
            self._run_one(options["run_size"], work_dir, options)
            return
        if options["note"]:
            if len(options["sizes"]) != 1:
                raise CommandError("--note applies to one size: give exactly one --sizes")
            results = SizeResults.load(work_dir / f"size-{options['sizes'][0]}" / "results.json")
            results.data.setdefault("notes", []).append(options["note"])
            results.save()
        elif not options["report_only"]:
            for size in options["sizes"]:
                self._spawn(size, work_dir, options)
        command = ("manage.py bench_scale --sizes " + " ".join(map(str, options["sizes"]))
                   + f" --bm25-engine {options['bm25_engine']} --work-dir WORK_DIR")
        path = write_report(work_dir, Path(options["docs"]), command=command)
        self.stdout.write(f"wrote {path}")

    def _spawn(self, size: int, work_dir: Path, options: dict) -> None:
        """Run one size in a child process whose data directory is the size's own."""
        data_dir = work_dir / f"size-{size}" / "data"
        env = {**os.environ, "TRACE_DATA_DIR": str(data_dir), "TRACE_EMBEDDING_PROVIDER": "hash",
               "TRACE_BM25_ENGINE": options["bm25_engine"]}
        env.pop("TRACE_DATABASE_URL", None)
        env.pop("TRACE_DATABASE_NAME", None)
        argv = [sys.executable, str(ROOT / "manage.py"), "bench_scale", "--run-size", str(size),
                "--work-dir", str(work_dir), "--corpus", options["corpus"],
                "--questions", options["questions"], "--workers", str(options["workers"]),
                "--queries", str(options["queries"]),
                "--maintenance-work-mem", options["maintenance_work_mem"]]
        self.stdout.write(f"size {size}: {shlex.join(argv)}")
        done = subprocess.run(argv, env=env, check=False)
        if done.returncode != 0:
            raise CommandError(f"size {size} failed (exit {done.returncode}); rerun to resume")

    def _run_one(self, size: int, work_dir: Path, options: dict) -> None:
        data_dir = Path(settings.TRACE_DATA_DIR).resolve()
        if not data_dir.is_relative_to(work_dir):
            raise CommandError("--run-size runs only in a data directory under --work-dir")
        try:
            call_command("migrate", verbosity=0)
            plan = SizePlan(
                chunks=size, work_dir=work_dir / f"size-{size}", corpus=Path(options["corpus"]),
                questions=Path(options["questions"]), query_count=options["queries"],
                workers=options["workers"], maintenance_work_mem=options["maintenance_work_mem"],
            )
            run_size(plan, log=lambda line: self.stdout.write(line))
        finally:
            embedded.stop_redis(data_dir)
            embedded.stop_postgres(data_dir)


def argparse_hidden() -> str:
    """Mark an option as internal in --help."""

    return argparse.SUPPRESS
