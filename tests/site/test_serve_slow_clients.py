"""The embedded default under attack: slow clients, a crashed web process, a port in use."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import psutil
import pytest

from trace_site import slow_clients

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.worker


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _serve_env(data_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("TRACE_") and k != "DJANGO_SETTINGS_MODULE"}
    env.update(TRACE_DATA_DIR=str(data_dir), TRACE_ADMIN_PASSWORD="slow-clients-pw")
    return env


@dataclass
class Served:
    proc: subprocess.Popen
    url: str

    def web_processes(self) -> list[psutil.Process]:
        return [p for p in psutil.Process(self.proc.pid).children()
                if "trace_site.web_server" in " ".join(p.cmdline())]


@pytest.fixture(scope="module")
def served() -> Iterator[Served]:
    """`manage.py serve` on a fresh data directory (outside pytest's root: see test_serve.py)."""
    parent = Path(tempfile.mkdtemp(prefix="trace-slow-"))
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "manage.py", "serve", "--no-demo", "--port", str(port),
         "--concurrency", "1"],
        cwd=ROOT, env=_serve_env(parent / "data"), stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 150
        while time.monotonic() < deadline and proc.poll() is None:
            if slow_clients.probe(url)[0].status == 200:
                break
            time.sleep(1)
        assert slow_clients.probe(url)[0].status == 200, "serve did not become healthy"
        yield Served(proc, url)
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        shutil.rmtree(parent, ignore_errors=True)


@pytest.mark.parametrize("trickle", ["body", "headers"])
def test_healthz_answers_within_two_seconds_while_twelve_clients_trickle_a_login(served, trickle):
    run = slow_clients.measure(served.url, connections=12, interval=4.0, seconds=12.0,
                               trickle=trickle, probe_every=0.5, quiet_probes=2)
    assert run.opened == 12
    # The slow connections were held open, not dropped to make room.
    assert run.closed_by_server == 0
    assert len(run.during) >= 5
    assert run.unanswered_during() == 0
    assert all(p.status == 200 for p in run.during), [p.status for p in run.during]
    assert run.worst_during() < 2.0, [round(p.seconds, 2) for p in run.during]
    assert run.server.startswith("waitress")


def test_a_killed_web_process_is_restarted_and_the_port_keeps_answering(served):
    processes = served.web_processes()
    assert len(processes) == 2, "two web processes share the port"
    victim = processes[0]
    victim.send_signal(signal.SIGKILL)
    victim.wait(timeout=10)
    # The other process keeps accepting on the shared socket meanwhile.
    answered = [slow_clients.probe(served.url)[0].status for _ in range(5)]
    assert answered == [200] * 5
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        current = served.web_processes()
        if len(current) == 2 and victim.pid not in {p.pid for p in current}:
            break
        time.sleep(0.5)
    current = served.web_processes()
    assert len(current) == 2 and victim.pid not in {p.pid for p in current}


def test_serve_says_the_port_is_in_use_before_starting_anything():
    parent = Path(tempfile.mkdtemp(prefix="trace-busy-"))
    try:
        with socket.socket() as holder:
            holder.bind(("127.0.0.1", 0))
            holder.listen(1)
            port = holder.getsockname()[1]
            result = subprocess.run(
                [sys.executable, "manage.py", "serve", "--no-demo", "--port", str(port)],
                cwd=ROOT, env=_serve_env(parent / "data"), capture_output=True, text=True,
                timeout=60,
            )
        assert result.returncode != 0
        assert f"Cannot listen on 127.0.0.1:{port}" in result.stderr
        # Nothing was started: no Postgres cluster, no Redis (the settings' secret key aside).
        data = parent / "data"
        made = {p.name for p in data.iterdir()} if data.exists() else set()
        assert made <= {"secret_key"}, made
    finally:
        shutil.rmtree(parent, ignore_errors=True)
