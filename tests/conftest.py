"""Shared fixtures: a real Celery worker on the real Redis and Postgres, users, a tiny archive."""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model

from common.search import SubCorpusInfo
from tests.fakes.retriever import InMemoryRetriever, chunk

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def django_db_modify_db_settings(django_db_modify_db_settings_parallel_suffix):
    """Give each test run a database of its own, so concurrent runs on one server never collide."""
    from django.conf import settings

    name = os.environ.get("TRACE_TEST_DATABASE_NAME") or f"test_trace_{os.getpid()}"
    settings.DATABASES["default"].setdefault("TEST", {})["NAME"] = name


@pytest.fixture(scope="session")
def stub_llm():
    """A local OpenAI-compatible stub endpoint on 127.0.0.1 (no model is reachable here)."""
    from tests.fakes.stub_server import StubServer

    with StubServer() as server:
        yield server


def start_worker(queue: str, *, llm_url: str, name: str, concurrency: int = 2,
                 include: tuple[str, ...] = ()) -> subprocess.Popen:
    """Start a real Celery worker on the test database, consuming one queue.

    The worker sees the stub chat endpoint as its LLM and the hashing embedder, so that
    investigations created with the `llm` policy run through the real OpenAI client.
    """
    from django.db import connection

    env = dict(os.environ)
    env.update({
        "TRACE_DATABASE_NAME": connection.settings_dict["NAME"],
        "TRACE_CELERY_EAGER": "0",
        "TRACE_CELERY_QUEUE": queue,
        "TRACE_LLM_BASE_URL": llm_url,
        "TRACE_LLM_MODEL": "stub-model",
        "TRACE_EMBEDDING_PROVIDER": "hash",
    })
    proc = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "trace_site", "worker", "--loglevel", "WARNING",
         "--concurrency", str(concurrency), "-n", f"{name}-{os.getpid()}@%h", "-Q", queue,
         *(f"--include={module}" for module in include)],
        cwd=ROOT, env=env, start_new_session=True,
    )
    try:
        _wait_for_worker(proc, queue)
    except Exception:
        stop_worker(proc, kill=True)
        raise
    return proc


def stop_worker(proc: subprocess.Popen, *, kill: bool = False) -> None:
    """Stop a worker and all its child processes (SIGKILL stands for a crashed host)."""
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL if kill else signal.SIGTERM)
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


@pytest.fixture(scope="session")
def celery_worker_process(django_db_setup, django_db_blocker, stub_llm):
    """One real Celery worker for the whole run, on this run's own queue."""
    proc = start_worker(_test_queue(), llm_url=stub_llm.url, name="test")
    yield proc
    stop_worker(proc)


def _test_queue() -> str:
    # Each test run gets its own queue, so a concurrent run's worker never takes its tasks.
    return f"trace-test-{os.getpid()}"


def _wait_for_worker(proc: subprocess.Popen, queue: str, timeout: float = 60) -> None:
    from trace_site.tasks import ping

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"Celery worker exited with {proc.returncode}")
        try:
            if ping.apply_async(args=["ready"], queue=queue).get(timeout=3) == "pong:ready":
                return
        except Exception:  # the worker is still booting
            time.sleep(0.5)
    raise RuntimeError("Celery worker did not answer in time")


@pytest.fixture(scope="session", autouse=True)
def _route_tasks_to_test_queue():
    """Send every task of this run to the run's own queue."""
    from django.conf import settings

    from trace_site.celery import app

    queue = _test_queue()
    settings.TRACE_CELERY_QUEUE = queue
    app.conf.task_default_queue = queue
    yield


# A tiny archive in Postgres, and an in-memory retriever over the same chunk ids.
TEXTS = [
    ("legaulois_1887_v1", "Le Gaulois", "press", "18870226", "1887-02-26",
     "M. Lejeune défend la protection de l'agriculture et le droit sur les céréales."),
    ("lintransigeant_1887_v1", "L'Intransigeant", "press", "18870227", "1887-02-27",
     "L'Intransigeant raille le discours de M. Lejeune sur les céréales, un bloc enfariné."),
    ("lintransigeant_1887_v1", "L'Intransigeant", "press", "18870301", "1887-03-01",
     "Courses de chevaux à Longchamp, le temps est beau. <script>alert(1)</script>"),
    ("debats_1887", "Chambre des députés", "debates", "1887-02-25_100_000", "1887-02-25",
     "M. le président. La parole est à M. Lejeune sur le droit de douane des céréales."),
]


@pytest.fixture
def users(db):
    model = get_user_model()
    return {name: model.objects.create_user(username=name, password="pw-" + name * 3)
            for name in ("alice", "bob", "eve")}


LEJEUNE_QUESTION = (
    "Que disent Le Gaulois et L'Intransigeant du discours de M. Lejeune sur les céréales ?")


@pytest.fixture
def finished(users, tiny_archive):
    """An investigation of alice's on the tiny archive, run to the end with the offline policy."""
    from agent.engine.offline import OfflinePolicy
    from agent.investigations import execution, services

    investigation = services.investigation_create(owner=users["alice"], question=LEJEUNE_QUESTION,
                                                  enqueue=False)
    execution.investigation_execute(investigation_id=investigation.pk, retriever=tiny_archive,
                                   policy=OfflinePolicy())
    investigation.refresh_from_db()
    return investigation


@pytest.fixture
def tiny_archive(db):
    """Create documents and chunks; return an InMemoryRetriever over the same chunk ids."""
    from archive.models import Chunk, Document, SubCorpus

    chunks = []
    infos: dict[str, SubCorpusInfo] = {}
    for slug, name, genre, external_id, day, text in TEXTS:
        sub_corpus, _ = SubCorpus.objects.get_or_create(
            slug=slug, defaults={"name": name, "genre": genre})
        infos[slug] = SubCorpusInfo(slug=slug, name=name, genre=genre)
        document = Document.objects.create(
            sub_corpus=sub_corpus, external_id=external_id, title=f"{name}, {day}",
            publication=name, date=dt.date.fromisoformat(day), date_precision="day", text=text,
            content_hash=hashlib.sha256(text.encode()).hexdigest(),
        )
        row = Chunk.objects.create(document=document, ordinal=0, text=text, char_start=0,
                                   char_end=len(text), token_count=len(text.split()))
        chunks.append(chunk(row.pk, document.pk, document.key, slug, day, text, document.title))
    indexes_in_step_with_the_database()
    return InMemoryRetriever(chunks, list(infos.values()))


def indexes_in_step_with_the_database() -> None:
    """As an ingest and a start-up do: mark the documents, then repair and apply the indexes.

    The search indexes live in files beside the test database: documents of earlier tests,
    rolled back or flushed there, stay in them until a repair drops them, and would crowd out
    this test's own documents (same texts, other chunk ids).
    """
    from archive.models import Document
    from archive.outbox import record_changes
    from retrieval.maintenance import indexes_start_up

    record_changes(Document.objects.values_list("pk", flat=True))
    indexes_start_up()
