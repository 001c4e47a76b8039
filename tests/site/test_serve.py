"""The run command brings everything up on its embedded default and Ctrl-C stops all of it."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import psutil
import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.worker


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _health(port: int) -> dict | None:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=10) as reply:
            return json.load(reply)
    except OSError:
        return None


@pytest.fixture
def data_dir():
    """A data directory outside pytest's temporary root.

    Run as root, the embedded Postgres runs as a user of its own, and a concurrent pytest session
    makes pytest's root private again, which would lock that user out of its own server.
    """
    parent = Path(tempfile.mkdtemp(prefix="trace-serve-"))
    yield parent / "data"
    shutil.rmtree(parent, ignore_errors=True)


def test_serve_starts_healthy_services_and_ctrl_c_leaves_no_process_behind(data_dir):
    port = _free_port()
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("TRACE_") and k != "DJANGO_SETTINGS_MODULE"}
    env.update(TRACE_DATA_DIR=str(data_dir), TRACE_ADMIN_PASSWORD="first-login-pw")
    proc = subprocess.Popen(
        [sys.executable, "manage.py", "serve", "--no-demo", "--port", str(port)],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    try:
        deadline = time.monotonic() + 120
        health = None
        while time.monotonic() < deadline and proc.poll() is None:
            health = _health(port)
            if health and health["status"] == "ok":
                break
            time.sleep(1)
        assert health and health["status"] == "ok", health
        started = [p for p in psutil.process_iter(["cmdline"])
                   if str(data_dir) in " ".join(p.info["cmdline"] or [])]
        started += psutil.Process(proc.pid).children(recursive=True)
        assert len(started) >= 4, "web, worker, Postgres and Redis run"
    finally:
        proc.send_signal(signal.SIGINT)
        output, _ = proc.communicate(timeout=60)
    assert proc.returncode == 0, output
    assert "Log in as 'historian' with password 'first-login-pw'" in output
    assert "Stopped embedded PostgreSQL." in output and "Stopped embedded Redis." in output
    gone, alive = psutil.wait_procs(started, timeout=10)
    assert not alive, f"left running: {[p.pid for p in alive]}"
