"""Measure how tall the live investigation page is for the first questions of a question file.

Runs each question with the configured policy (the offline policy when no LLM is set) in this
process, serves the site with `manage.py runserver`, opens each investigation page in Chromium
at a given width once the run has finished and every step has arrived, and prints
`document.body.scrollHeight` per question, nothing unfolded, with the number of sub-question
sections and the height in screens of the viewport (as JSON with --out; as a Markdown table in a
generated block of a document with --write-doc).

    .venv/bin/python measurement/scripts/measure_live_page.py --count 3 --width 1280 \
        --out heights.json
    .venv/bin/python measurement/scripts/measure_live_page.py --count 8 \
        --write-doc docs/live-page.md

Use its own TRACE_DATA_DIR to keep the measurement's investigations out of a working database.
The demo corpus is loaded first when the archive is empty.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "trace_site.settings")
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

import django  # noqa: E402

django.setup()

from django.contrib.auth import get_user_model  # noqa: E402
from django.core.management import call_command  # noqa: E402

from agent.investigations import execution, services  # noqa: E402
from agent.models import Investigation  # noqa: E402
from archive.models import Document  # noqa: E402
from common.generated_docs import (  # noqa: E402
    check_generated_block,
    shown_path,
    write_generated_block,
)

DEFAULT_QUESTIONS = ROOT / "demo" / "historiqa" / "questions_dev.jsonl"
DEFAULT_CORPUS = ROOT / "demo" / "historiqa" / "corpus.jsonl"
USERNAME = "page-measure"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _questions(path: Path, count: int) -> list[dict]:
    rows = []
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                rows.append(json.loads(line))
            if len(rows) == count:
                break
    return rows


def _prepare(corpus: Path) -> None:
    call_command("migrate", interactive=False, verbosity=0)
    call_command("collectstatic", interactive=False, verbosity=0)
    if not Document.objects.exists():
        print(f"Loading {corpus} …", flush=True)
        call_command("ingest", str(corpus))


def _run_investigations(user, questions: list[dict]) -> list[int]:
    ids = []
    for row in questions:
        investigation = services.investigation_create(
            owner=user, question=row["question"], qid=row.get("qid", ""), enqueue=False)
        started = time.monotonic()
        execution.investigation_execute(investigation_id=investigation.pk)
        print(f"  ran #{investigation.pk} {row.get('qid', '')} in "
              f"{time.monotonic() - started:.1f} s", flush=True)
        ids.append(investigation.pk)
    return ids


def _policy_label(ids: list[int]) -> str:
    labels = sorted({i.policy_label for i in Investigation.objects.filter(pk__in=ids)})
    return ", ".join(labels) or "no run"


def _wait_for_server(url: str, proc: subprocess.Popen, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the web server exited with {proc.returncode}")
        try:
            urllib.request.urlopen(url, timeout=2)
            return
        except urllib.error.HTTPError:
            return  # it answers (a redirect to the login page counts)
        except OSError:
            time.sleep(0.3)
    raise RuntimeError("the web server did not start in time")


def _measure(base: str, password: str, ids: list[int], width: int,
             height: int) -> list[tuple[int, int]]:
    # deferred: Playwright is an optional dependency (requirements-dev.lock), needed only once
    # the runs are done and the pages are measured
    from playwright.sync_api import sync_playwright

    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    heights = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium,
                                             args=["--no-sandbox", "--disable-gpu",
                                                   "--disable-dev-shm-usage"])
        page = browser.new_page(viewport={"width": width, "height": height})
        page.goto(f"{base}/accounts/login/")
        page.fill("input[name=username]", USERNAME)
        page.fill("input[name=password]", password)
        page.click("form button[type=submit]")
        page.wait_for_load_state("networkidle")
        for pk in ids:
            page.goto(f"{base}/investigations/{pk}/")
            # A long backlog arrives over a few polls: wait until the poller is gone.
            page.wait_for_selector("#poller", state="detached", timeout=120_000)
            page.wait_for_load_state("networkidle")
            heights.append((int(page.evaluate("document.body.scrollHeight")),
                            page.locator("section.subq").count()))
        browser.close()
    return heights


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--questions", type=Path, default=DEFAULT_QUESTIONS)
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--count", type=int, default=3)
    parser.add_argument("--width", type=int, default=1280)
    parser.add_argument("--height", type=int, default=900, help="the viewport's height (a screen)")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--write-doc", type=Path,
                        help="write the table into this document's generated block")
    parser.add_argument("--doc-block", default="live-page-heights")
    args = parser.parse_args()
    if args.write_doc:
        check_generated_block(args.write_doc, args.doc_block)

    _prepare(args.corpus)
    password = secrets.token_urlsafe(16)
    user, _ = get_user_model().objects.get_or_create(username=USERNAME)
    user.set_password(password)
    user.save()
    questions = _questions(args.questions, args.count)
    ids = _run_investigations(user, questions)
    policy = _policy_label(ids)

    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, "manage.py", "runserver", "--noreload", f"127.0.0.1:{port}"],
        cwd=ROOT, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        base = f"http://127.0.0.1:{port}"
        _wait_for_server(f"{base}/accounts/login/", server)
        heights = _measure(base, password, ids, args.width, args.height)
    finally:
        server.terminate()
        server.wait(timeout=20)
    rows = [{"qid": q.get("qid", ""), "investigation": pk, "width": args.width,
             "viewport_height": args.height, "sub_questions": sections, "height": h,
             "screens": round(h / args.height, 2)}
            for q, pk, (h, sections) in zip(questions, ids, heights, strict=True)]
    for row in rows:
        print(f"{row['qid']}\t#{row['investigation']}\t{row['sub_questions']} sub-questions\t"
              f"{row['width']} px wide\t{row['height']} px tall\t{row['screens']:.1f} screens")
    if args.out:
        args.out.write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")
    if args.write_doc:
        command = "python measurement/scripts/measure_live_page.py " + " ".join(
            shown_path(Path(a), ROOT) if a == str(args.write_doc) else a for a in sys.argv[1:])
        write_generated_block(args.write_doc, args.doc_block, _table(rows, policy),
                              command=command)
        print(f"wrote {shown_path(args.write_doc, ROOT)}")


def _table(rows: list[dict], policy: str) -> str:
    """The heights as Markdown: one row per question, then the tallest."""
    if not rows:
        return "No question measured."
    width, height = rows[0]["width"], rows[0]["viewport_height"]
    lines = [f"Finished runs ({policy}), page opened at {width}×{height} px with nothing "
             "unfolded; a screen is the viewport's height.", "",
             "| question | sub-questions | page height (px) | screens |", "|---|---:|---:|---:|"]
    lines += [f"| {row['qid'] or row['investigation']} | {row['sub_questions']} | "
              f"{row['height']} | {row['screens']:.2f} |" for row in rows]
    tallest = max(rows, key=lambda row: row["height"])
    lines += ["", f"Tallest: {tallest['screens']:.2f} screens ({tallest['height']} px, "
                  f"{tallest['sub_questions']} sub-questions)."]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
