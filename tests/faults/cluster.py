"""A private TRACE installation for fault injection: its own Postgres, Redis and workers.

Faults (killed workers, a restarted Postgres or Redis) must never reach the servers that other
test runs share, so everything here lives in a data directory of its own.
"""

from __future__ import annotations

import contextlib
import os
import random
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[2]
QUEUE = "faults"
HEARTBEAT_SECONDS = 1.0
SWEEP_SECONDS = 4.0


def cluster_env(data_dir: Path, *, llm_url: str = "", extra: dict[str, str] | None = None
                ) -> dict[str, str]:
    """Return the environment of every process of the private installation."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("TRACE_") and k != "DJANGO_SETTINGS_MODULE"}
    env.update({
        "DJANGO_SETTINGS_MODULE": "trace_site.settings",
        "TRACE_DATA_DIR": str(data_dir),
        "TRACE_CELERY_QUEUE": QUEUE,
        "TRACE_EMBEDDING_PROVIDER": "hash",
        "TRACE_HEARTBEAT_SECONDS": str(HEARTBEAT_SECONDS),
        "TRACE_SWEEP_SECONDS": str(SWEEP_SECONDS),
        "TRACE_AUTO_RESUME_ATTEMPTS": "4",
        "TRACE_LLM_MODEL": "stub-model",
        "TRACE_LLM_TIMEOUT": "2",
        "TRACE_LLM_MAX_RETRIES": "4",
    })
    if llm_url:
        env["TRACE_LLM_BASE_URL"] = llm_url
    env.update(extra or {})
    return env


class Workers:
    """Celery workers of the private installation, restarted the way `serve` restarts them."""

    def __init__(self, env: dict[str, str], count: int = 2, concurrency: int = 2):
        self.env = env
        self.concurrency = concurrency
        self.procs: list[subprocess.Popen] = [self._start(i) for i in range(count)]
        self.kills = {"child": 0, "main": 0}

    def _start(self, index: int) -> subprocess.Popen:
        return subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "trace_site", "worker", "--loglevel", "ERROR",
             "--concurrency", str(self.concurrency), "-n", f"fault{index}-{time.time_ns()}@%h",
             "-Q", QUEUE],
            cwd=ROOT, env=self.env, start_new_session=True,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )

    def pool_children(self, index: int) -> list[psutil.Process]:
        try:
            return psutil.Process(self.procs[index].pid).children()
        except psutil.NoSuchProcess:
            return []

    def kill_random(self, rng: random.Random) -> str:
        """SIGKILL one pool process, or a main process (then restart it as `serve` would)."""
        index = rng.randrange(len(self.procs))
        children = self.pool_children(index)
        if children and rng.random() < 0.6:
            rng.choice(children).send_signal(signal.SIGKILL)
            self.kills["child"] += 1
            return "child"
        self.procs[index].send_signal(signal.SIGKILL)
        self.procs[index].wait()
        _kill_group(self.procs[index])  # `serve` kills the orphaned pool before restarting
        self.procs[index] = self._start(index)
        self.kills["main"] += 1
        return "main"

    def stop(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in self.procs:
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                _kill_group(proc)
                proc.wait()
            _kill_group(proc)


class Served:
    """The whole installation under `manage.py serve`, which restarts a worker that dies."""

    def __init__(self, env: dict[str, str], log: Path):
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        self.port = port
        self.log = log.open("w")
        self.proc = subprocess.Popen(
            [sys.executable, "manage.py", "serve", "--no-demo", "--port", str(port),
             "--concurrency", "2"],
            cwd=ROOT, env=env, stdout=self.log, stderr=subprocess.STDOUT,
        )
        self.kills = {"child": 0, "main": 0}

    def web_answers(self) -> bool:
        """Tell whether the web server answers (any status: it is up)."""
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/healthz", timeout=10):
                return True
        except urllib.error.HTTPError:
            return True
        except OSError:
            return False

    def worker(self) -> psutil.Process | None:
        """Return the Celery worker's main process, if `serve` runs one right now."""
        for child in psutil.Process(self.proc.pid).children():
            try:
                if "celery" in " ".join(child.cmdline()):
                    return child
            except psutil.NoSuchProcess:
                continue
        return None

    def kill_random(self, rng: random.Random) -> str:
        """SIGKILL a pool process or the worker's main process; `serve` must restart the latter."""
        worker = self.worker()
        if worker is None:
            return ""
        children = worker.children()
        if children and rng.random() < 0.6:
            rng.choice(children).send_signal(signal.SIGKILL)
            self.kills["child"] += 1
            return "child"
        worker.send_signal(signal.SIGKILL)
        self.kills["main"] += 1
        return "main"

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()


def _kill_group(proc: subprocess.Popen) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
