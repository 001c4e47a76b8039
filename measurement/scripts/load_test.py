"""Load test on loopback: concurrent investigations, viewers polling their live steps, memory.

Starts N investigations at once (default 20), then N viewers (one per investigation) poll the
live step list once a second, as the page does, for a fixed time (default 60 s). Prints the
median and p95 poll latency, the failures, and the resident memory (RSS) of the web server, the
worker, PostgreSQL and Redis (at the start, at their peak, at the end). Then sends a 10 MB
question through the Ask form and through a batch upload, and checks that each is refused in
under a second, that nothing is created and that the worker's memory does not move.

Two ways to run it (never against another host: the URL must be loopback):

  # start `manage.py serve` on a fresh data directory of its own, and stop it at the end
  .venv/bin/python measurement/scripts/load_test.py --serve /tmp/trace-load

  # against a running `make run` (its data directory finds Postgres and Redis)
  .venv/bin/python measurement/scripts/load_test.py --url http://127.0.0.1:8000 \
      --username historian --password … --data-dir data --serve-pid PID_OF_SERVE
"""

from __future__ import annotations

import argparse
import http.cookiejar
import ipaddress
import json
import os
import re
import secrets
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import django
import psutil
from django.db.models import Count

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from measurement.processes import stop_process_group  # noqa: E402
from trace_site import embedded  # noqa: E402

QUESTIONS = ROOT / "demo" / "historiqa" / "questions_dev.jsonl"
GROUPS = ("web", "worker", "postgres", "redis")


# --- HTTP ---------------------------------------------------------------------------------------

class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


class Session:
    """A logged-in browser: cookies, the CSRF token, no redirect following."""

    def __init__(self, base: str, timeout: float = 30) -> None:
        self.base = base.rstrip("/")
        self.timeout = timeout
        self.cookies = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(self.cookies), NoRedirect()
        )

    def request(self, path: str, data: bytes | None = None,
                headers: dict[str, str] | None = None) -> tuple[int, bytes, dict[str, str]]:
        """Send one request: (status, body, headers); HTTP errors are answers, not exceptions."""
        req = urllib.request.Request(self.base + path, data=data, headers=headers or {})
        try:
            with self.opener.open(req, timeout=self.timeout) as response:
                return response.status, response.read(), dict(response.headers)
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read(), dict(exc.headers or {})

    def csrf(self) -> str:
        return next((c.value or "" for c in self.cookies if c.name == "csrftoken"), "")

    def form_body(self, fields: dict[str, str]) -> bytes:
        return urllib.parse.urlencode({**fields, "csrfmiddlewaretoken": self.csrf()}).encode()

    def post_form(self, path: str, fields: dict[str, str]) -> tuple[int, bytes, dict[str, str]]:
        return self.post_body(path, self.form_body(fields), "application/x-www-form-urlencoded")

    def post_body(self, path: str, body: bytes, content_type: str) -> tuple[int, bytes, dict]:
        return self.request(path, body, {"Content-Type": content_type,
                                         "Referer": self.base + path})

    def file_body(self, name: str, content: bytes) -> tuple[bytes, str]:
        """Encode a multipart upload of one file: (body, content type)."""
        boundary = secrets.token_hex(16)
        body = b"".join([
            f"--{boundary}\r\nContent-Disposition: form-data; name=\"csrfmiddlewaretoken\""
            f"\r\n\r\n{self.csrf()}\r\n".encode(),
            f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; "
            f"filename=\"{name}\"\r\nContent-Type: application/octet-stream\r\n\r\n".encode(),
            content, f"\r\n--{boundary}--\r\n".encode(),
        ])
        return body, f"multipart/form-data; boundary={boundary}"

    def login(self, username: str, password: str) -> None:
        self.request("/accounts/login/")
        status, _, headers = self.post_form(
            "/accounts/login/", {"username": username, "password": password})
        if status != 302:
            raise SystemExit(f"log-in as {username!r} failed (HTTP {status})")


def require_loopback(url: str) -> None:
    host = urllib.parse.urlparse(url).hostname or ""
    try:
        loopback = all(ipaddress.ip_address(info[4][0]).is_loopback
                       for info in socket.getaddrinfo(host, None))
    except (socket.gaierror, ValueError):
        loopback = False
    if not loopback:
        raise SystemExit(f"{url} is not a loopback address; this load test only runs locally")


# --- Memory -------------------------------------------------------------------------------------

@dataclass
class Processes:
    """Find the processes of one TRACE instance, grouped as web, worker, postgres, redis."""

    data_dir: Path
    serve_pid: int | None = None

    def groups(self) -> dict[str, list[psutil.Process]]:
        found: dict[str, list[psutil.Process]] = {g: [] for g in GROUPS}
        for group, pid in (("postgres", embedded.postgres_pid(self.data_dir)),
                           ("redis", embedded.redis_pid(self.data_dir))):
            if pid:
                root = psutil.Process(pid)
                found[group] = [root, *root.children(recursive=True)]
        if self.serve_pid:
            candidates = psutil.Process(self.serve_pid).children(recursive=True)
        else:
            candidates = list(psutil.process_iter())
        for proc in candidates:
            try:
                cmd = " ".join(proc.cmdline())
            except psutil.Error:
                continue
            if "trace_site.web_server" in cmd or ("gunicorn" in cmd and "trace_site.wsgi" in cmd):
                found["web"].append(proc)
            elif "celery" in cmd and "trace_site" in cmd and " worker" in cmd:
                found["worker"].append(proc)
        return found


def rss_mb(processes: list[psutil.Process]) -> float:
    total = 0
    for proc in processes:
        try:
            total += proc.memory_info().rss
        except psutil.Error:
            continue
    return total / 1_000_000


@dataclass
class MemorySampler:
    """Sample the RSS of each group once a second in a thread."""

    processes: Processes
    samples: dict[str, list[float]] = field(default_factory=lambda: {g: [] for g in GROUPS})
    counts: dict[str, int] = field(default_factory=dict)
    stop: threading.Event = field(default_factory=threading.Event)

    def sample(self) -> dict[str, float]:
        groups = self.processes.groups()
        self.counts = {g: len(p) for g, p in groups.items()}
        now = {g: rss_mb(p) for g, p in groups.items()}
        for group, value in now.items():
            self.samples[group].append(value)
        return now

    def run(self) -> None:
        while not self.stop.wait(1.0):
            self.sample()


# --- Load ---------------------------------------------------------------------------------------

@dataclass
class Polls:
    latencies: list[float] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, seconds: float, problem: str = "") -> None:
        with self.lock:
            self.latencies.append(seconds)
            if problem:
                self.failures.append(problem)


_AFTER = re.compile(rb"/steps/\?after=(\d+)")


def create_investigation(session: Session, question: str) -> int:
    status, body, headers = session.post_form("/investigations/new/", {"question": question})
    location = headers.get("Location", "")
    match = re.search(r"/investigations/(\d+)/", location)
    if status != 302 or not match:
        raise RuntimeError(f"creating an investigation answered HTTP {status}")
    return int(match.group(1))


def view(session: Session, pk: int, until: float, interval: float, polls: Polls) -> None:
    """Poll the live step list like the page does: every `interval`, from the last step seen."""
    after = 0
    while time.monotonic() < until:
        started = time.monotonic()
        try:
            status, body, _ = session.request(f"/investigations/{pk}/steps/?after={after}")
        except OSError as exc:
            polls.add(time.monotonic() - started, f"{type(exc).__name__}: {exc}")
        else:
            polls.add(time.monotonic() - started, "" if status == 200 else f"HTTP {status}")
            if status == 200 and (found := _AFTER.search(body)):
                after = int(found.group(1))
        time.sleep(max(0.0, interval - (time.monotonic() - started)))


def in_threads(target, args_list: list[tuple]) -> list:
    results: list = [None] * len(args_list)

    def run(i: int, args: tuple) -> None:
        try:
            results[i] = target(*args)
        except Exception as exc:  # reported, never hidden
            results[i] = exc

    threads = [threading.Thread(target=run, args=(i, a)) for i, a in enumerate(args_list)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def statuses(data_dir: Path, ids: list[int]) -> dict[str, int]:
    """Count the investigations by status, read from the database."""
    # deferred: the models load once setup_django has set Django up on the data directory the
    # command line names (TRACE_DATA_DIR), so not at the top of this script
    from agent.models import Investigation

    rows = (Investigation.objects.filter(pk__in=ids).values("status")
            .annotate(n=Count("pk")).order_by("status"))
    return {row["status"]: row["n"] for row in rows}


def investigation_count() -> int:
    from agent.models import Investigation  # deferred: after setup_django (see statuses)

    return Investigation.objects.count()


def big_question_checks(session: Session, sampler: MemorySampler, megabytes: int) -> list[dict]:
    """Send a `megabytes` MB question by the Ask form and by batch upload; measure each."""
    question = ("Qui a parlé du budget ? " * (megabytes * 1_000_000 // 24 + 1))
    # Bodies are encoded before the clock starts: only the server's answer is timed.
    form = session.form_body({"question": question})
    upload, upload_type = session.file_body(
        "q.jsonl", json.dumps({"qid": "big", "question": question}).encode())
    results = []
    for label, path, body, content_type in (
        ("Ask form", "/investigations/new/", form, "application/x-www-form-urlencoded"),
        ("batch upload", "/investigations/batches/new/", upload, upload_type),
    ):
        before_rows = investigation_count()
        worker_before = sampler.sample()["worker"]
        started = time.monotonic()
        try:
            status, answer_bytes, _ = session.post_body(path, body, content_type)
            answer = answer_bytes.decode("utf-8", "replace").strip()[:120]
        except OSError as exc:
            status, answer = 0, f"{type(exc).__name__}: {exc}"
        elapsed = time.monotonic() - started
        time.sleep(3)  # give a worker the time to pick up anything that was queued
        worker_after = sampler.sample()["worker"]
        results.append({
            "entry": label, "status": status, "seconds": elapsed, "answer": answer,
            "created": investigation_count() - before_rows,
            "worker_mb_before": worker_before, "worker_mb_after": worker_after,
        })
    return results


# --- Own instance -------------------------------------------------------------------------------

def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_serve(data_dir: Path, port: int, username: str, password: str,
                provider: str) -> subprocess.Popen:
    env = dict(os.environ, TRACE_DATA_DIR=str(data_dir), TRACE_ADMIN_USER=username,
               TRACE_ADMIN_PASSWORD=password, TRACE_EMBEDDING_PROVIDER=provider)
    log = (data_dir / "serve.log").open("ab")
    proc = subprocess.Popen([sys.executable, "manage.py", "serve", "--port", str(port)],
                            cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True)
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"serve exited ({proc.returncode}); see {data_dir / 'serve.log'}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/accounts/login/", timeout=2):
                return proc
        except OSError:
            time.sleep(1)
    stop_serve(proc)
    raise SystemExit("serve did not answer within 600 s")


def stop_serve(proc: subprocess.Popen) -> None:
    stop_process_group(proc, grace_seconds=60)


def setup_django(data_dir: Path) -> None:
    os.environ["TRACE_DATA_DIR"] = str(data_dir)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "trace_site.settings")
    django.setup()


# --- Report -------------------------------------------------------------------------------------

def report(args, ids, polls: Polls, sampler: MemorySampler, ended: dict[str, int],
           big: list[dict], wall: float) -> str:
    # deferred: the project is importable once setup_django has put it on sys.path
    from measurement.evaluation.metrics import median, percentile

    ms = [x * 1000 for x in polls.latencies]
    lines = [
        f"Load test: {args.investigations} investigations started at once, {args.viewers} "
        f"viewers polling their live steps every {args.interval:g} s for {args.seconds:g} s.",
        f"Polls: {len(ms)}; median {median(ms):.0f} ms; p95 {percentile(ms, 95):.0f} "
        f"ms; max {max(ms):.0f} ms; failures {len(polls.failures)}.",
        f"Investigations created: {len(ids)}; statuses after the run: "
        + ", ".join(f"{k} {v}" for k, v in ended.items()) + f" ({wall:.0f} s after the start).",
        "",
        "| process | count | RSS start (MB) | RSS peak (MB) | RSS end (MB) |",
        "|---|---|---|---|---|",
    ]
    for group in GROUPS:
        values = sampler.samples[group] or [0.0]
        lines.append(f"| {group} | {sampler.counts.get(group, 0)} | {values[0]:.0f} | "
                     f"{max(values):.0f} | {values[-1]:.0f} |")
    lines += ["", "| 10 MB question | HTTP | seconds | investigations created | "
                  "worker RSS before → after (MB) | answer |", "|---|---|---|---|---|---|"]
    for b in big:
        lines.append(f"| {b['entry']} | {b['status']} | {b['seconds']:.3f} | {b['created']} | "
                     f"{b['worker_mb_before']:.0f} → {b['worker_mb_after']:.0f} | "
                     f"{b['answer'].replace('|', '/')} |")
    if polls.failures:
        lines += ["", "First failures: " + "; ".join(polls.failures[:5])]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", default="http://127.0.0.1:8000")
    parser.add_argument("--username", default="historian")
    parser.add_argument("--password", default=os.environ.get("TRACE_LOAD_PASSWORD", ""))
    parser.add_argument("--data-dir", type=Path, default=ROOT / "data",
                        help="the instance's data directory (finds Postgres and Redis)")
    parser.add_argument("--serve-pid", type=int, help="count only this serve's web and worker")
    parser.add_argument("--serve", type=Path, metavar="DATA_DIR",
                        help="start `manage.py serve` on this data directory, stop it at the end")
    parser.add_argument("--provider", default="hash",
                        help="embedding provider of a started instance (default: hash)")
    parser.add_argument("--investigations", type=int, default=20)
    parser.add_argument("--viewers", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--interval", type=float, default=1.0)
    parser.add_argument("--big-question-mb", type=int, default=10)
    parser.add_argument("--markdown", type=Path, help="also write the figures to this file")
    args = parser.parse_args()
    if not 1 <= args.investigations <= 100 or not 1 <= args.viewers <= 100:
        raise SystemExit("at most 100 investigations and 100 viewers")
    if not 0 < args.seconds <= 600:
        raise SystemExit("--seconds must be between 0 and 600")

    serve = None
    if args.serve:
        args.serve.mkdir(parents=True, exist_ok=True)
        port = free_port()
        args.url, args.data_dir = f"http://127.0.0.1:{port}", args.serve.resolve()
        args.password = args.password or secrets.token_urlsafe(12)
        print(f"Starting serve on {args.url} with data in {args.data_dir} …", flush=True)
        serve = start_serve(args.data_dir, port, args.username, args.password, args.provider)
        args.serve_pid = serve.pid
    require_loopback(args.url)
    try:
        run(args)
    finally:
        if serve is not None:
            stop_serve(serve)


def run(args) -> None:
    setup_django(args.data_dir.resolve())
    questions = [json.loads(line)["question"] for line in QUESTIONS.open(encoding="utf-8")]
    sampler = MemorySampler(Processes(args.data_dir.resolve(), args.serve_pid))
    sampler.sample()
    sessions = [Session(args.url) for _ in range(max(args.investigations, args.viewers))]
    for session in sessions:
        session.login(args.username, args.password)
    thread = threading.Thread(target=sampler.run, daemon=True)
    thread.start()
    started = time.monotonic()
    created = in_threads(create_investigation, [
        (sessions[i], questions[i % len(questions)]) for i in range(args.investigations)])
    ids = [pk for pk in created if isinstance(pk, int)]
    errors = [str(e) for e in created if not isinstance(e, int)]
    if errors:
        print(f"{len(errors)} investigation(s) not created: {errors[:3]}", flush=True)
    polls = Polls()
    until = time.monotonic() + args.seconds
    in_threads(view, [(sessions[i], ids[i % len(ids)], until, args.interval, polls)
                      for i in range(args.viewers)] if ids else [])
    # Let the runs finish (bounded) before measuring the idle worker.
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        ended = statuses(args.data_dir, ids)
        if not set(ended) & {"queued", "running"}:
            break
        time.sleep(2)
    wall = time.monotonic() - started
    big = big_question_checks(sessions[0], sampler, args.big_question_mb)
    sampler.stop.set()
    thread.join()
    text = report(args, ids, polls, sampler, ended, big, wall)
    print(text)
    if args.markdown:
        args.markdown.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
