"""Measure a first start: a fresh clone to a healthy app, and to the first answered question.

Clones this repository's committed HEAD into a temporary folder, links its `.venv` to this
one's (installing the requirements is not measured), and runs `manage.py serve` there with its
own data folder and port, as `make run` does on a fresh clone. The clock starts with the
command; it polls `/healthz` until it answers 200, then logs in over HTTP with the first user
(`TRACE_ADMIN_USER` / `TRACE_ADMIN_PASSWORD`, set by this script), asks one question through
the Ask form and reads the run's page until it has finished. Ctrl-C (SIGINT) then stops
everything and the folder is removed.

    .venv/bin/python measurement/scripts/measure_first_start.py
    .venv/bin/python measurement/scripts/measure_first_start.py --compare --write-doc README.md

The two durations are printed and, with --write-doc, written into the document's generated block
`first-start`, with the command and what the machine was doing. With --compare a second fresh
clone is measured without the shipped demo vectors (deleted before the start), so every
embedding is computed, as before they shipped.
"""

from __future__ import annotations

import argparse
import html
import http.cookiejar
import json
import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from common.generated_docs import (  # noqa: E402
    check_generated_block,
    shown_path,
    write_generated_block,
)
from measurement.processes import stop_process_group  # noqa: E402

DEFAULT_QUESTIONS = ROOT / "demo" / "historiqa" / "questions_dev.jsonl"
USERNAME = "first-start"
FINAL_STATUSES = ("finished", "failed", "cancelled", "interrupted")


@dataclass
class Measurement:
    commit: str
    healthy_s: float
    answered_s: float
    status: str
    policy: str
    question: str
    seed_line: str
    load_before: str
    cores: int


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _first_question(path: Path) -> str:
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                return json.loads(line)["question"]
    raise SystemExit(f"{path} holds no question")


class Browser:
    """A cookie-keeping HTTP client that sends Django's CSRF token with its forms."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar))

    def get(self, path: str) -> tuple[str, str]:
        with self.opener.open(self.base + path, timeout=30) as response:
            return response.geturl(), response.read().decode("utf-8")

    def post_form(self, path: str, fields: dict[str, str]) -> tuple[str, str]:
        _, page = self.get(path)
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)
        if token is None:
            raise RuntimeError(f"no CSRF token on {path}")
        body = urllib.parse.urlencode({"csrfmiddlewaretoken": token.group(1), **fields}).encode()
        request = urllib.request.Request(self.base + path, data=body,
                                         headers={"Referer": self.base + path})
        with self.opener.open(request, timeout=60) as response:
            return response.geturl(), response.read().decode("utf-8")


def _wait_healthy(base: str, server: subprocess.Popen, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"manage.py serve exited with {server.returncode}")
        try:
            with urllib.request.urlopen(base + "/healthz", timeout=5) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.5)
    raise RuntimeError(f"no healthy app within {timeout:g} s")


def _ask(base: str, password: str, question: str, timeout: float) -> tuple[str, str]:
    """Log in, ask ``question``, and wait for its run to end: (status, policy label)."""
    browser = Browser(base)
    url, _ = browser.post_form("/accounts/login/", {"username": USERNAME, "password": password})
    if "/accounts/login/" in url:
        raise RuntimeError("the login was refused")
    url, _ = browser.post_form("/investigations/new/", {"question": question})
    match = re.search(r"/investigations/(\d+)/$", urllib.parse.urlparse(url).path)
    if match is None:
        raise RuntimeError(f"asking did not open a run (ended at {url})")
    path = f"/investigations/{match.group(1)}/"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        _, page = browser.get(path)
        status = re.search(r'class="status status-([a-z]+)"', page)
        if status and status.group(1) in FINAL_STATUSES:
            policy = re.search(r'title="What decided the verdicts">([^<]*)<', page)
            return status.group(1), html.unescape(policy.group(1)) if policy else ""
        time.sleep(1)
    raise RuntimeError(f"the run {path} did not end within {timeout:g} s")


def _stop(server: subprocess.Popen) -> None:
    stop_process_group(server, grace_seconds=90)


def measure(question: str, timeout: float, keep: bool, *, shipped: bool = True) -> Measurement:
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, check=True,
                            capture_output=True, text=True).stdout.strip()
    work = Path(tempfile.mkdtemp(prefix="trace-first-start-"))
    clone = work / "trace"
    subprocess.run(["git", "clone", "--quiet", "--no-hardlinks", str(ROOT), str(clone)],
                   check=True)
    (clone / ".venv").symlink_to((ROOT / ".venv").resolve())
    if not shipped:
        for path in (clone / "demo" / "historiqa").glob("embeddings-*.npz"):
            path.unlink()
    port = _free_port()
    password = secrets.token_urlsafe(16)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("TRACE_") and k != "DJANGO_SETTINGS_MODULE"}
    env.update(TRACE_DATA_DIR=str(work / "data"), TRACE_ADMIN_USER=USERNAME,
               TRACE_ADMIN_PASSWORD=password)
    log_path = work / "serve.log"
    base = f"http://127.0.0.1:{port}"
    load_before = " ".join(Path("/proc/loadavg").read_text().split()[:3])
    server = None
    try:
        with log_path.open("w", encoding="utf-8") as log:
            started = time.monotonic()
            server = subprocess.Popen(
                [str(clone / ".venv" / "bin" / "python"), "manage.py", "serve", "--port",
                 str(port)], cwd=clone, env=env, stdout=log, stderr=subprocess.STDOUT,
                start_new_session=True)
            _wait_healthy(base, server, timeout)
            healthy = time.monotonic() - started
            print(f"healthy after {healthy:.1f} s", flush=True)
            status, policy = _ask(base, password, question, timeout)
            answered = time.monotonic() - started
            print(f"question {status} after {answered:.1f} s ({policy})", flush=True)
    except Exception:
        print(log_path.read_text(encoding="utf-8")[-3000:], file=sys.stderr)
        raise
    finally:
        if server is not None:
            _stop(server)
        said = log_path.read_text(encoding="utf-8") if log_path.exists() else ""
        if keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    seed_line = next((line.strip() for line in said.splitlines() if "hipped vectors" in line), "")
    return Measurement(commit=commit, healthy_s=healthy, answered_s=answered, status=status,
                       policy=policy, question=question, seed_line=seed_line,
                       load_before=load_before, cores=os.cpu_count() or 1)


def _table(runs: list[Measurement]) -> str:
    heads = ["with the shipped vectors", "without them (all computed)"][: len(runs)]
    first = runs[0]
    lines = [
        "| From `manage.py serve` on a fresh clone to … | " + " | ".join(heads) + " |",
        "|---|" + "---:|" * len(runs),
        "| a healthy app (`/healthz` answers 200) | "
        + " | ".join(f"{m.healthy_s:.1f} s" for m in runs) + " |",
        "| the first question answered | "
        + " | ".join(f"{m.answered_s:.1f} s ({m.status})" for m in runs) + " |",
        "",
        f"Commit {first.commit}, {first.cores} cores, load average "
        + " then ".join(m.load_before for m in runs) + " when each started; verdicts by the "
        f"{first.policy}; the question: “{first.question}”. The start said: "
        + "; ".join(f"“{m.seed_line or 'no shipped vectors'}”" for m in runs) + ".",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--question", help="the question to ask (default: the first dev one)")
    parser.add_argument("--timeout", type=float, default=1800,
                        help="seconds allowed to each stage")
    parser.add_argument("--keep", action="store_true", help="keep the clone and its data")
    parser.add_argument("--write-doc", type=Path,
                        help="write the figures into this document's generated block")
    parser.add_argument("--doc-block", default="first-start")
    parser.add_argument("--compare", action="store_true",
                        help="also measure a clone without the shipped demo vectors")
    args = parser.parse_args()
    if args.write_doc:
        check_generated_block(args.write_doc, args.doc_block)
    question = args.question or _first_question(DEFAULT_QUESTIONS)
    runs = [measure(question, args.timeout, args.keep)]
    if args.compare:
        runs.append(measure(question, args.timeout, args.keep, shipped=False))
    if args.write_doc:
        command = "python measurement/scripts/measure_first_start.py " + " ".join(
            shown_path(Path(a), ROOT) if a == str(args.write_doc) else a for a in sys.argv[1:])
        write_generated_block(args.write_doc, args.doc_block, _table(runs),
                              command=command.strip())
        print(f"wrote {shown_path(args.write_doc, ROOT)}")


if __name__ == "__main__":
    main()
