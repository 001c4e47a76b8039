"""The embedded default under attack: slow clients, a crashed web process, a port in use."""

from __future__ import annotations

import contextlib
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

from measurement import slow_clients

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
    data_dir: Path

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
        yield Served(proc, url, parent / "data")
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


@contextlib.contextmanager
def _running(args: list[str], env: dict[str, str], url: str) -> Iterator[subprocess.Popen]:
    proc = subprocess.Popen(args, cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and slow_clients.probe(url)[0].status is None:
            assert proc.poll() is None, f"{args[0]} exited ({proc.returncode})"
            time.sleep(0.5)
        yield proc
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)


def test_the_compose_nginx_front_shields_a_single_threaded_gunicorn(served, tmp_path):
    nginx = shutil.which("nginx")
    if nginx is None:
        pytest.skip("nginx is not installed here")
    gunicorn_port, nginx_port = _free_port(), _free_port()
    env = _serve_env(served.data_dir)  # the served instance's Postgres and Redis
    gunicorn = [sys.executable, "-m", "gunicorn", "trace_site.wsgi", "--workers", "1",
                "--worker-class", "sync", "--bind", f"127.0.0.1:{gunicorn_port}"]
    conf = (ROOT / "deploy" / "nginx" / "trace.conf").read_text()
    conf = conf.replace("server web:8000;", f"server 127.0.0.1:{gunicorn_port};")
    conf = conf.replace("listen 8080;", f"listen 127.0.0.1:{nginx_port};")
    (tmp_path / "trace.conf").write_text(conf)
    (tmp_path / "nginx.conf").write_text(
        f"daemon off;\npid {tmp_path}/nginx.pid;\nerror_log {tmp_path}/error.log;\n"
        "events { worker_connections 256; }\n"
        f"http {{\n access_log off;\n client_body_temp_path {tmp_path}/body;\n"
        f" proxy_temp_path {tmp_path}/proxy;\n include {tmp_path}/trace.conf;\n}}\n")
    direct, front = f"http://127.0.0.1:{gunicorn_port}", f"http://127.0.0.1:{nginx_port}"
    with _running(gunicorn, env, direct):
        # Without the front, one slow client holds the only worker: /healthz goes unanswered.
        exposed = slow_clients.measure(direct, connections=1, interval=1.0, seconds=3.0,
                                       quiet_probes=1)
        assert exposed.unanswered_during() >= 1
        with _running([nginx, "-p", str(tmp_path), "-c", str(tmp_path / "nginx.conf")],
                      env, front):
            bodies = slow_clients.measure(front, connections=12, interval=4.0, seconds=10.0,
                                          probe_every=0.5, quiet_probes=2)
            assert bodies.unanswered_during() == 0 and bodies.worst_during() < 2.0
            assert bodies.server == "nginx"
            # Headers slower than client_header_timeout (10 s) are cut off; a write notices it
            # one or two bytes later, and the run ends as soon as every connection is closed.
            headers = slow_clients.measure(front, connections=12, interval=4.0, seconds=30.0,
                                           trickle="headers", probe_every=0.5, quiet_probes=1)
            assert headers.closed_by_server == 12
            assert headers.unanswered_during() == 0
