"""Run everything on the embedded default: Postgres, Redis, migrations, demo data, worker, web."""

from __future__ import annotations

import contextlib
import functools
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError
from django.db import connection

from agent.investigations.durability import sweep_every
from agent.investigations.services import investigations_sweep
from archive.embeddings import get_provider
from archive.embeddings.cache import cache_release
from archive.embeddings.vector_file import vector_file_seed
from archive.models import Document
from retrieval.maintenance import indexes_start_up
from trace_site import embedded
from trace_site.demo_archive import DEMO_CORPUS_FILES, demo_vectors_path
from trace_site.env import env_int, env_str
from trace_site.secret_key import stored_secret_key
from trace_site.web_server import WebServerOptions, bind_listener

# A child that exits within QUICK_EXIT_SECONDS of its start more than three times in a row is
# restarted after a pause that doubles each time, up to MAX_RESTART_PAUSE seconds.
QUICK_EXIT_SECONDS = 10
MAX_RESTART_PAUSE = 30


class Command(BaseCommand):
    help = "Start the embedded services, a Celery worker and the web server (Ctrl-C stops all)."

    def add_arguments(self, parser):
        parser.add_argument("--host", default=env_str("TRACE_HOST", "127.0.0.1"))
        parser.add_argument("--port", type=int, default=env_int("TRACE_PORT", 8000))
        parser.add_argument("--no-demo", action="store_true", help="do not load the demo corpus")
        parser.add_argument("--concurrency", type=int, default=2, help="Celery worker processes")
        parser.add_argument("--web-processes", type=int,
                            default=env_int("TRACE_WEB_PROCESSES", 2),
                            help="web server processes sharing the port")
        parser.add_argument("--web-threads", type=int, default=env_int("TRACE_WEB_THREADS", 4),
                            help="Django threads per web server process")

    def handle(self, *args, **options):
        data_dir = Path(settings.TRACE_DATA_DIR)
        # What this command starts itself, it stops on the way out; Postgres starts with the
        # first connection (migrate), Redis here, before the worker needs it.
        started_postgres = (
            settings.TRACE_EMBEDDED_POSTGRES and embedded.postgres_pid(data_dir) is None
        )
        started_redis = False
        children: dict[str, subprocess.Popen] = {}
        listener: socket.socket | None = None
        # Explicit handlers: a backgrounded shell job starts with SIGINT ignored.
        for signum in (signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, _interrupt)
        try:
            if not env_str("TRACE_SECRET_KEY"):
                stored_secret_key(settings.TRACE_SECRET_KEY_FILE)  # before any child reads it
            # The port is bound first, once: a port in use is said before anything starts, every
            # web process accepts from this one socket, and one that is restarted leaves the
            # connections waiting in its queue, never refused.
            web = self._web_options(options["web_threads"])
            listener = self._bind(options["host"], options["port"])
            if settings.TRACE_EMBEDDED_REDIS:
                started_redis = embedded.ensure_redis(data_dir)
            self.stdout.write("Preparing the database…")
            call_command("migrate", interactive=False, verbosity=0)
            call_command("collectstatic", interactive=False, verbosity=0)
            self._ensure_first_user()
            if not options["no_demo"]:
                self._load_demo_corpus()
            self._bring_indexes_up_to_date()
            starters: dict[str, Callable[[], subprocess.Popen]] = {
                "worker": lambda: self._start_worker(options["concurrency"]),
            }
            for number in range(1, max(1, options["web_processes"]) + 1):
                name = "web server" if options["web_processes"] <= 1 else f"web server {number}"
                starters[name] = functools.partial(self._start_web, listener.fileno(), web)
            for name, start in starters.items():
                children[name] = start()
            url = f"http://{options['host']}:{options['port']}/"
            self.stdout.write(self.style.SUCCESS(f"TRACE is running at {url}  (Ctrl-C stops it)"))
            self.stdout.write(f"Health: {url}healthz")
            self._supervise(children, starters, data_dir)
        except KeyboardInterrupt:
            pass
        finally:
            self._stop(children)
            if listener is not None:
                listener.close()
            if started_redis and embedded.stop_redis(data_dir):
                self.stdout.write("Stopped embedded Redis.")
            if started_postgres and embedded.stop_postgres(data_dir):
                self.stdout.write("Stopped embedded PostgreSQL.")

    def _ensure_first_user(self) -> None:
        user_model = get_user_model()
        if user_model.objects.exists():
            return
        username = env_str("TRACE_ADMIN_USER", "historian")
        password = env_str("TRACE_ADMIN_PASSWORD") or secrets.token_urlsafe(12)
        user_model.objects.create_superuser(username=username, password=password, email="")
        self.stdout.write(self.style.WARNING(
            f"Created the first user. Log in as {username!r} with password {password!r} "
            "(shown once; change it in the admin)."
        ))

    def _bring_indexes_up_to_date(self) -> None:
        for name, done in indexes_start_up().items():
            self.stdout.write(f"Index {name}: {done}")

    def _load_demo_corpus(self) -> None:
        if Document.objects.exists():
            return
        try:
            model = get_provider().name
        except ValueError:  # a misconfigured provider: the ingest says what is wrong
            model = ""
        # The demo's vectors ship with it: the ingest reuses those that match, computes the rest.
        seeded = vector_file_seed(demo_vectors_path(model), model) if model else None
        if seeded is not None:
            self.stdout.write(seeded.message)
        try:
            for path in DEMO_CORPUS_FILES:
                if not path.exists():
                    self.stdout.write(f"No demo corpus at {path}; skipping.")
                    continue
                self.stdout.write(f"Loading the demo corpus {path.name} (first start only)…")
                call_command("ingest", str(path))
        finally:
            if seeded is not None:  # the shipped vectors no chunk took
                cache_release(model, seeded.added)

    def _start_worker(self, concurrency: int) -> subprocess.Popen:
        return subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "trace_site", "worker",
             "--loglevel", "WARNING", "--concurrency", str(concurrency), "-n", "trace@%h"],
            start_new_session=True,
        )

    def _web_options(self, threads: int) -> WebServerOptions:
        try:
            return WebServerOptions(
                threads=threads,
                connection_limit=env_int("TRACE_WEB_CONNECTION_LIMIT",
                                         WebServerOptions.connection_limit),
                idle_timeout=env_int("TRACE_WEB_IDLE_TIMEOUT", WebServerOptions.idle_timeout),
            )
        except ValueError as exc:
            raise CommandError(str(exc)) from None

    def _bind(self, host: str, port: int) -> socket.socket:
        try:
            return bind_listener(host, port)
        except OSError as exc:
            raise CommandError(f"Cannot listen on {host}:{port}: {exc.strerror}. "
                               "Is TRACE already running? Choose another --port.") from None

    def _start_web(self, fd: int, web: WebServerOptions) -> subprocess.Popen:
        return subprocess.Popen(
            [sys.executable, "-m", "trace_site.web_server", "--fd", str(fd), *web.as_arguments()],
            pass_fds=(fd,), start_new_session=True,
        )

    def _supervise(self, children: dict[str, subprocess.Popen],
                   starters: dict[str, Callable[[], subprocess.Popen]], data_dir: Path) -> None:
        """Restart a child that exits and an embedded server that stops, forever.

        A child that keeps dying right after its start (a broken configuration) is restarted
        with a growing pause, so the log stays readable and the machine is not kept busy.
        """
        started = {name: time.monotonic() for name in children}
        quick_exits = dict.fromkeys(children, 0)
        restart_at: dict[str, float] = {}
        next_sweep = time.monotonic()
        while True:
            time.sleep(0.5)
            self._keep_embedded_services_up(data_dir)
            now = time.monotonic()
            if now >= next_sweep:
                # The workers sweep too, but while every worker is down (or restarting) only
                # the supervisor can notice the runs they left behind.
                _sweep()
                next_sweep = time.monotonic() + sweep_every()
            for name, child in children.items():
                if name in restart_at:
                    if now >= restart_at[name]:
                        del restart_at[name]
                        children[name] = starters[name]()
                        started[name] = time.monotonic()
                    continue
                if child.poll() is None:
                    continue
                lived = now - started[name]
                quick_exits[name] = quick_exits[name] + 1 if lived < QUICK_EXIT_SECONDS else 0
                pause = min(MAX_RESTART_PAUSE, 2 ** max(0, quick_exits[name] - 3) - 1)
                self.stderr.write(f"The {name} exited ({child.returncode}); restarting it"
                                  + (f" in {pause} s." if pause else "."))
                _kill_group(child)  # pool processes orphaned by a killed worker go too
                restart_at[name] = now + pause

    def _keep_embedded_services_up(self, data_dir: Path) -> None:
        try:
            if settings.TRACE_EMBEDDED_REDIS and embedded.redis_pid(data_dir) is None:
                self.stderr.write("Embedded Redis stopped; starting it again.")
                embedded.ensure_redis(data_dir)
            if settings.TRACE_EMBEDDED_POSTGRES and embedded.postgres_pid(data_dir) is None:
                self.stderr.write("Embedded PostgreSQL stopped; starting it again.")
                embedded.ensure_postgres(data_dir)
        except Exception as exc:  # try again on the next round
            self.stderr.write(f"Could not restart an embedded service: {exc}")

    def _stop(self, children: dict[str, subprocess.Popen]) -> None:
        for signum in (signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, signal.SIG_IGN)  # a second Ctrl-C must not abort the clean-up
        for child in children.values():
            if child.poll() is None:
                os.killpg(child.pid, signal.SIGTERM)
        deadline = time.monotonic() + 15
        for child in children.values():
            try:
                child.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                os.killpg(child.pid, signal.SIGKILL)
                child.wait()
        if children:
            self.stdout.write("Stopped the web server and the worker.")


def _sweep() -> None:
    try:
        result = investigations_sweep()
        if result.interrupted or result.resumed or result.requeued:
            sys.stderr.write(f"Sweep: {result.interrupted} interrupted, {result.resumed} resumed, "
                             f"{result.requeued} queued again.\n")
    except Exception as exc:  # the database or Redis may be restarting: next time
        sys.stderr.write(f"Sweep failed: {exc}\n")
    finally:
        connection.close()


def _kill_group(child: subprocess.Popen) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(child.pid, signal.SIGKILL)


def _interrupt(signum, frame) -> None:
    raise KeyboardInterrupt
