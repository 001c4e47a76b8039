"""Drive one fault scenario against a private installation and print its figures as JSON.

Run as ``python -m tests.faults.scenario <name> <seed>`` with the environment of
tests.faults.cluster.cluster_env (test_faults.py does this). The driver hosts the faulty model
endpoint, starts the workers, injects the faults, resumes through the web UI whatever the
automatic sweep left for a human, and measures:

- completed: investigations finished after resume, out of total;
- stuck: runs that stayed running (no heartbeat) or queued (no task waiting) for longer than
  the sweep interval, sampled every 0.25 s;
- paid_repeated: model replies the endpoint delivered twice for the same prompt (a prompt is
  unique to one investigation and one step, since every question is different).
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import sys
import threading
import time
from collections import Counter
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import django

REPORT_PREFIX = "FAULTS-REPORT "
QUESTION = "Que disent Le Gaulois et L'Intransigeant du discours de M. Lejeune sur les céréales"


def main() -> None:
    django.setup()
    name, seed = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 0
    report = prepare() if name == "prepare" else SCENARIOS[name](random.Random(seed))
    print(REPORT_PREFIX + json.dumps(report), flush=True)


def prepare() -> dict[str, Any]:
    """Migrate the private database and load the tiny archive and one user."""
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    from archive.models import CorpusRevision, Document
    from tests.conftest import TEXTS

    call_command("migrate", interactive=False, verbosity=0)
    get_user_model().objects.get_or_create(username="historian")
    if not Document.objects.exists():
        _load_tiny_archive(TEXTS)
    CorpusRevision.objects.update_or_create(pk=1, defaults={"revision": time.time_ns()})
    return {"documents": Document.objects.count()}


def _load_tiny_archive(texts) -> None:
    import datetime as dt

    from archive.models import Chunk, Document, SubCorpus
    from archive.outbox import record_changes
    from retrieval.maintenance import indexes_start_up

    for slug, name, genre, external_id, day, text in texts:
        sub_corpus, _ = SubCorpus.objects.get_or_create(
            slug=slug, defaults={"name": name, "genre": genre})
        document = Document.objects.create(
            sub_corpus=sub_corpus, external_id=external_id, title=f"{name}, {day}",
            publication=name, date=dt.date.fromisoformat(day), date_precision="day", text=text,
            content_hash=hashlib.sha256(text.encode()).hexdigest(),
        )
        Chunk.objects.create(document=document, ordinal=0, text=text, char_start=0,
                             char_end=len(text), token_count=len(text.split()))
    # As an ingest and a start-up do: mark the documents, repair the indexes (documents of
    # earlier runs linger there), apply the marks.
    record_changes(Document.objects.values_list("pk", flat=True))
    indexes_start_up()


# -- the faulty model endpoint --------------------------------------------------------------------


class Endpoint:
    """The stub endpoint, scripted or failing at random; knows which requests were paid for."""

    def __init__(self, schedule: list[Any], **failures: Any):
        from tests.fakes.stub_server import StubServer

        self.server = StubServer(**failures)
        self.server.state.faults = list(schedule)

    def __enter__(self) -> Endpoint:
        self.server.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.__exit__(*exc)

    @property
    def url(self) -> str:
        return self.server.url

    def delivered(self) -> list[str]:
        """Return one digest per request answered with a usable reply in time (a paid call).

        Replies too slow for the client are retried by the client itself, not by a resume, and
        are left out, like every failed reply.
        """
        with self.server.state.lock:
            pairs = list(zip(self.server.state.requests, self.server.state.served, strict=False))
        return [hashlib.sha256(json.dumps(body.get("messages"), sort_keys=True).encode())
                .hexdigest() for body, served in pairs if _is_paid(served)]

    def served(self) -> Counter:
        with self.server.state.lock:
            return Counter(self.server.state.served)


def _is_paid(served: str) -> bool:
    from django.conf import settings

    if served.startswith("sleep "):
        return float(served.split()[1]) < settings.TRACE_LLM_TIMEOUT
    return served == "ok"


# -- measuring -----------------------------------------------------------------------------------


class StuckMonitor:
    """Sample active runs; note how long each went without a live worker vouching for it."""

    def __init__(self) -> None:
        self.longest: dict[int, float] = {}
        self.longest_status: dict[int, str] = {}
        self.vouched: dict[int, Any] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> StuckMonitor:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        from django.db import connection
        from django.utils import timezone

        from agent.investigations.services import _waiting_investigation_ids
        from agent.models import Investigation

        while not self._stop.wait(0.25):
            try:
                now = timezone.now()
                active = list(Investigation.objects.filter(status__in=Investigation.ACTIVE)
                              .values_list("pk", "status", "heartbeat_at", "created_at"))
                waiting = (_waiting_investigation_ids() or set()) if any(
                    row[1] == Investigation.Status.QUEUED for row in active) else set()
            except Exception:  # the database is restarting: sample again later
                connection.close()
                continue
            for pk, status, beat, created in active:
                if status == Investigation.Status.QUEUED and pk in waiting:
                    # A task waits for it: the next free worker takes it.
                    self.vouched[pk] = now
                    continue
                last = max(filter(None, [beat, created, self.vouched.get(pk)]))
                age = (now - last).total_seconds()
                if age > self.longest.get(pk, 0.0):
                    self.longest[pk] = age
                    self.longest_status[pk] = (f"{status} {age:.1f}s at {time.monotonic():.1f}"
                                               f" reserved={pk in _reserved_ids()}")
        connection.close()

    def stuck(self, limit: float) -> list[int]:
        return sorted(pk for pk, age in self.longest.items() if age > limit)


# -- running a scenario --------------------------------------------------------------------------


def _reserved_ids() -> set[int]:
    """Return the investigations whose task a worker took but did not acknowledge."""
    import re

    from trace_site.celery import app

    ids: set[int] = set()
    with app.connection_for_read() as conn:
        for raw in conn.default_channel.client.hvals("unacked"):
            headers = json.loads(raw)[0].get("headers", {})
            ids.update(int(n) for n in re.findall(r"\d+", headers.get("argsrepr", "")))
    return ids


def _owner():
    from django.contrib.auth import get_user_model

    return get_user_model().objects.get(username="historian")


def _create(count: int, label: str) -> list[int]:
    from agent.investigations import services

    base = _create.counter  # type: ignore[attr-defined]
    _create.counter += count  # type: ignore[attr-defined]
    return [services.investigation_create(
        owner=_owner(), question=f"{QUESTION} ({label} dossier {base + i}) ?").pk
        for i in range(count)]


_create.counter = 0  # type: ignore[attr-defined]


def _wait_for_workers(timeout: float = 90) -> None:
    from tests.faults.cluster import QUEUE
    from trace_site.tasks import ping

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if ping.apply_async(args=["up"], queue=QUEUE).get(timeout=3) == "pong:up":
                return
        except Exception:
            time.sleep(0.5)
    raise RuntimeError("no worker answered")


def _settled(ids: list[int]) -> bool:
    """Tell whether every run is finished or waits for a human (auto-resume exhausted)."""
    from django.conf import settings

    from agent.models import Investigation

    for run in Investigation.objects.filter(pk__in=ids):
        if run.status == Investigation.Status.FINISHED:
            continue
        if run.status == Investigation.Status.INTERRUPTED and \
                run.attempts < settings.TRACE_AUTO_RESUME_ATTEMPTS:
            return False  # the sweep resumes it
        if run.is_active:
            return False
    return True


def _wait_settled(ids: list[int], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if _settled(ids):
                return
        except Exception:
            from django.db import connection

            connection.close()
        time.sleep(0.5)


RESUMED_BY_HAND: list[str] = []


def _resume_through_ui(ids: list[int]) -> int:
    """Press Resume on the investigation page of every run that did not finish."""
    from django.test import Client
    from django.urls import reverse

    from agent.models import Investigation

    client = Client()
    client.force_login(_owner())
    pressed = 0
    for run in Investigation.objects.filter(pk__in=ids).exclude(
            status=Investigation.Status.FINISHED):
        RESUMED_BY_HAND.append(f"{run.pk} {run.status}: {run.error[:160]}")
        response = client.post(reverse("investigation_resume", args=[run.pk]))
        assert response.status_code == 302, response.status_code
        pressed += 1
    return pressed


def _summary(ids: list[int], endpoint: Endpoint, monitor: StuckMonitor, **extra) -> dict:
    from django.conf import settings

    from agent.models import Investigation

    runs = Investigation.objects.filter(pk__in=ids)
    digests = Counter(endpoint.delivered())
    not_finished = {run.pk: f"{run.status}: {run.error[:200]}"
                    for run in runs if run.status != Investigation.Status.FINISHED}
    return {
        "total": len(ids),
        "completed": runs.filter(status=Investigation.Status.FINISHED).count(),
        "not_finished": not_finished,
        "stuck": monitor.stuck(settings.TRACE_SWEEP_SECONDS + 1.0),
        "longest_unvouched_seconds": round(max(monitor.longest.values(), default=0.0), 2),
        "paid_calls": sum(digests.values()),
        "paid_repeated": sum(n - 1 for n in digests.values()),
        "attempts": sorted(runs.values_list("attempts", flat=True)),
        "resumed_by_hand": RESUMED_BY_HAND,
        "stuck_detail": {pk: monitor.longest_status[pk]
                         for pk in monitor.stuck(settings.TRACE_SWEEP_SECONDS + 1.0)},
        **extra,
    }


@contextmanager
def _installation(rng: random.Random, schedule: list[Any], *, served: bool = False,
                  **failures: Any):
    """Start the model endpoint and the workers (alone, or under `serve`), and measure."""
    from django.conf import settings

    from tests.faults.cluster import Served, Workers, cluster_env

    previous_endpoint = settings.TRACE_LLM_BASE_URL
    with Endpoint(schedule, **failures) as endpoint:
        settings.TRACE_LLM_BASE_URL = endpoint.url  # new runs use the LLM policy
        env = cluster_env(Path(settings.TRACE_DATA_DIR), llm_url=endpoint.url)
        log = Path(settings.TRACE_DATA_DIR) / "serve.log"
        pool: Served | Workers = Served(env, log) if served else Workers(env)
        try:
            _wait_for_workers()
            with StuckMonitor() as monitor:
                yield endpoint, pool, monitor
        finally:
            pool.stop()
            # Later tests see the instance as it was.
            settings.TRACE_LLM_BASE_URL = previous_endpoint


def _finish(ids: list[int], settle_timeout: float) -> int:
    """Let the sweep do its work, then resume the rest by hand until everything finished."""
    _wait_settled(ids, settle_timeout)
    pressed = 0
    for _ in range(3):
        if _settled(ids) and _all_finished(ids):
            break
        pressed += _resume_through_ui(ids)
        _wait_settled(ids, settle_timeout)
    return pressed


def _all_finished(ids: list[int]) -> bool:
    from agent.models import Investigation

    return not Investigation.objects.filter(pk__in=ids).exclude(
        status=Investigation.Status.FINISHED).exists()


def _running(ids: list[int]) -> int:
    from agent.models import Investigation

    return Investigation.objects.filter(pk__in=ids, status=Investigation.Status.RUNNING).count()


KILLS_SECONDS = 240


def scenario_kills(rng: random.Random, kills: int = 20) -> dict:
    """Kill pool processes and worker main processes at random moments of running runs."""
    from tests.faults.cluster import Served

    schedule: list[Any] = [("sleep", 0.3)] * 5000  # every call takes a while
    with _installation(rng, schedule, served=True) as (endpoint, pool, monitor):
        ids = _create(6, "kills")
        started = time.monotonic()
        kinds: list[str] = []
        # Each worker main process killed costs a heartbeat timeout and a restart before a run
        # is running again: a draw with many of them needs more than 150 s to land every kill.
        while len(kinds) < kills and time.monotonic() - started < KILLS_SECONDS:
            time.sleep(rng.uniform(0.3, 2.0))
            if _running(ids) == 0:
                if _settled(ids):
                    ids += _create(3, "kills")  # keep the workers busy until every kill landed
                continue
            kind = pool.kill_random(rng)
            if kind:
                kinds.append(kind)
        pressed = _finish(ids, settle_timeout=60)
        assert isinstance(pool, Served)
        return _summary(ids, endpoint, monitor, kills=len(kinds), kill_kinds=dict(Counter(kinds)),
                        ui_resumes=pressed, serve_alive=pool.proc.poll() is None,
                        web_answers=pool.web_answers(), worker_running=pool.worker() is not None)


def scenario_postgres_restart(rng: random.Random) -> dict:
    """Stop Postgres under running runs, keep it down a moment, start it again."""
    from django.conf import settings
    from django.db import connection

    from common.locks import file_lock
    from trace_site import embedded

    data_dir = Path(settings.TRACE_DATA_DIR)
    with _installation(rng, [("sleep", 0.3)] * 5000) as (endpoint, pool, monitor):
        ids = _create(6, "postgres")
        restarts = 0
        for _ in range(2):
            deadline = time.monotonic() + 60
            while _running(ids) < 2 and time.monotonic() < deadline:
                time.sleep(0.2)
            time.sleep(rng.uniform(0.5, 2.0))
            connection.close()
            # Holding the start lock keeps the server down: connecting processes wait for it.
            with file_lock(data_dir / "postgres.lock"):
                embedded.stop_postgres(data_dir)
                time.sleep(2.0)
            embedded.ensure_postgres(data_dir)
            restarts += 1
        pressed = _finish(ids, settle_timeout=60)
        return _summary(ids, endpoint, monitor, restarts=restarts, ui_resumes=pressed)


def scenario_redis_restart(rng: random.Random) -> dict:
    """Stop Redis under running runs, submit while it is down, start it again."""
    from django.conf import settings

    from agent.models import Investigation
    from trace_site import embedded

    data_dir = Path(settings.TRACE_DATA_DIR)
    with _installation(rng, [("sleep", 0.3)] * 5000) as (endpoint, pool, monitor):
        ids = _create(6, "redis")
        deadline = time.monotonic() + 60
        while _running(ids) < 2 and time.monotonic() < deadline:
            time.sleep(0.2)
        time.sleep(rng.uniform(0.5, 2.0))
        embedded.stop_redis(data_dir)
        submitted_while_down = _create(2, "redis-down")
        down = Investigation.objects.filter(pk__in=submitted_while_down)
        failed_at_submit = down.filter(status=Investigation.Status.FAILED).count()
        messages = sorted(set(down.values_list("error", flat=True)))
        time.sleep(2.0)
        embedded.ensure_redis(data_dir)
        ids += submitted_while_down
        pressed = _finish(ids, settle_timeout=60)
        return _summary(ids, endpoint, monitor, failed_at_submit=failed_at_submit,
                        submitted_while_down=len(submitted_while_down),
                        submit_errors=messages, ui_resumes=pressed)


def scenario_model_faults(rng: random.Random, share: float = 0.2) -> dict:
    """One model call in five fails, in every way the stub endpoint can fail."""
    from tests.fakes.stub_server import FAILURE_MODES

    modes = tuple(FAILURE_MODES)
    # Slow replies take longer than the client's timeout (TRACE_LLM_TIMEOUT in cluster_env).
    # Each mode once among the first requests (one in five), then a random fifth of the rest.
    scripted = [step for mode in modes for step in (mode, None, None, None, None)]
    with _installation(rng, scripted, fail_rate=share, fail_modes=modes, slow_seconds=3.0,
                       seed=rng.randrange(1 << 30)) as (endpoint, pool, monitor):
        ids = _create(6, "model")
        pressed = _finish(ids, settle_timeout=120)
        served = endpoint.served()
        requests = sum(served.values())
        return _summary(ids, endpoint, monitor, requests=requests,
                        faults=requests - served["ok"], served=dict(served),
                        ui_resumes=pressed)


SCENARIOS = {
    "kills": scenario_kills,
    "postgres": scenario_postgres_restart,
    "redis": scenario_redis_restart,
    "model": scenario_model_faults,
}


if __name__ == "__main__":
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "trace_site.settings")
    main()
