"""Time /healthz while slow clients trickle login bodies into a TRACE instance on loopback."""

from __future__ import annotations

import contextlib
import os
import secrets
import shlex
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from measurement import slow_clients

SERVE_START_SECONDS = 180


class Command(BaseCommand):
    help = ("Open N slow connections (a login body sent one byte every few seconds) against a "
            "TRACE instance on loopback and time /healthz before, during and after.")
    requires_system_checks = []

    def add_arguments(self, parser):
        target = parser.add_mutually_exclusive_group(required=True)
        target.add_argument("--url", help="a running instance, e.g. http://127.0.0.1:8000")
        target.add_argument("--serve", metavar="DIR",
                            help="start `manage.py serve --no-demo` on this fresh data directory, "
                                 "measure it, stop it")
        parser.add_argument("--connections", type=int, default=12)
        parser.add_argument("--interval", type=float, default=4.0,
                            help="seconds between two bytes of each slow connection")
        parser.add_argument("--seconds", type=float, default=40.0, help="how long the attack lasts")
        parser.add_argument("--trickle", choices=slow_clients.TRICKLES, default="body",
                            help="send the body slowly (after whole headers), or the headers")
        parser.add_argument("--markdown", metavar="FILE", help="also write the section here")
        parser.add_argument("--title", default="Slow clients")

    def handle(self, *args, **options):
        command = "python manage.py slow_clients " + shlex.join(
            a for a in sys.argv[2:] if a)
        try:
            with self._target(options) as url:
                self.stdout.write(f"Measuring {url} with {options['connections']} slow clients "
                                  f"for {options['seconds']:g} s…")
                run = slow_clients.measure(
                    url, connections=options["connections"], interval=options["interval"],
                    seconds=options["seconds"], trickle=options["trickle"])
        except (slow_clients.NotLoopback, ValueError) as exc:
            raise CommandError(str(exc)) from None
        section = slow_clients.report(run, title=options["title"], command=command)
        self.stdout.write(section)
        if options["markdown"]:
            Path(options["markdown"]).write_text(section, encoding="utf-8")

    @contextlib.contextmanager
    def _target(self, options) -> Iterator[str]:
        if options["url"]:
            yield options["url"]
            return
        data_dir = Path(options["serve"]).resolve()
        if data_dir.exists() and any(data_dir.iterdir()):
            raise CommandError(f"{data_dir} is not empty: give a fresh data directory")
        port = _free_port()
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("TRACE_") and k != "DJANGO_SETTINGS_MODULE"}
        env.update(TRACE_DATA_DIR=str(data_dir), TRACE_ADMIN_PASSWORD=_throwaway_password())
        self.stdout.write(f"Starting manage.py serve on port {port} with data in {data_dir}…")
        proc = subprocess.Popen(
            [sys.executable, "manage.py", "serve", "--no-demo", "--port", str(port)],
            cwd=settings.BASE_DIR, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        url = f"http://127.0.0.1:{port}"
        try:
            _wait_healthy(url, proc)
            yield url
        finally:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _throwaway_password() -> str:
    return secrets.token_urlsafe(12)


def _wait_healthy(url: str, proc: subprocess.Popen) -> None:
    deadline = time.monotonic() + SERVE_START_SECONDS
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise CommandError(f"manage.py serve exited ({proc.returncode}) before answering")
        result, _ = slow_clients.probe(url)
        if result.status == 200:
            return
        time.sleep(1)
    raise CommandError(f"manage.py serve did not answer /healthz with 200 within "
                       f"{SERVE_START_SECONDS} s")
