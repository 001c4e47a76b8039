"""Fault injection: killed workers, restarted Postgres and Redis, a failing model endpoint.

Each scenario runs against a private installation (tests.faults.cluster) in a driver process
(tests.faults.scenario) and reports what it measured; every run must finish after resume, none
may stay running or queued without a live worker for longer than the sweep interval, and no
model reply may be paid twice except the one in flight when a process was killed.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.faults.cluster import ROOT, SWEEP_SECONDS, cluster_env
from tests.faults.scenario import REPORT_PREFIX

pytestmark = [pytest.mark.faults, pytest.mark.worker]


def _run(data_dir: Path, name: str, seed: int = 0, timeout: float = 400) -> dict:
    proc = subprocess.run(
        [sys.executable, "-m", "tests.faults.scenario", name, str(seed)],
        cwd=ROOT, env=cluster_env(data_dir), capture_output=True, text=True, timeout=timeout,
    )
    lines = [line for line in proc.stdout.splitlines() if line.startswith(REPORT_PREFIX)]
    assert proc.returncode == 0 and lines, proc.stdout[-3000:] + proc.stderr[-5000:]
    return json.loads(lines[-1][len(REPORT_PREFIX):])


@pytest.fixture(scope="module")
def data_dir():
    """A private data directory (outside pytest's root: the embedded Postgres runs as its own
    user when the tests run as root), migrated and loaded once for every scenario."""
    from trace_site import embedded

    parent = Path(tempfile.mkdtemp(prefix="trace-faults-"))
    directory = parent / "data"
    try:
        _run(directory, "prepare")
        yield directory
    finally:
        embedded.stop_redis(directory)
        embedded.stop_postgres(directory)
        shutil.rmtree(parent, ignore_errors=True)


def _show(name: str, report: dict, capsys) -> None:
    with capsys.disabled():
        print(f"\n[faults:{name}] completed {report['completed']}/{report['total']}, "
              f"stuck {len(report['stuck'])} (longest without a live worker "
              f"{report['longest_unvouched_seconds']} s, limit {SWEEP_SECONDS} s), "
              f"paid calls {report['paid_calls']}, repeated {report['paid_repeated']}; "
              + json.dumps({k: v for k, v in report.items() if k not in {
                  "completed", "total", "stuck", "paid_calls", "paid_repeated",
                  "longest_unvouched_seconds"}}))


def _assert_recovered(report: dict) -> None:
    assert report["completed"] == report["total"], report["not_finished"]
    assert report["stuck"] == [], report


def test_twenty_random_kills_of_worker_processes(data_dir, capsys):
    report = _run(data_dir, "kills", seed=13)
    _show("kills", report, capsys)
    assert report["kills"] == 20
    assert set(report["kill_kinds"]) == {"child", "main"}
    # `serve` restarted every killed worker and kept the web server up.
    assert report["serve_alive"] and report["web_answers"] and report["worker_running"]
    _assert_recovered(report)
    # Only the call in flight at each kill may be paid again.
    assert report["paid_repeated"] <= report["kills"]


def test_postgres_restarts_mid_run(data_dir, capsys):
    report = _run(data_dir, "postgres", seed=5)
    _show("postgres", report, capsys)
    assert report["restarts"] == 2
    _assert_recovered(report)
    assert report["paid_repeated"] <= 2 * report["total"]


def test_redis_restart_mid_run_and_submit_while_down(data_dir, capsys):
    report = _run(data_dir, "redis", seed=7)
    _show("redis", report, capsys)
    assert report["failed_at_submit"] == report["submitted_while_down"] == 2
    assert all("could not be queued" in message for message in report["submit_errors"])
    _assert_recovered(report)
    assert report["paid_repeated"] == 0


def test_a_model_endpoint_failing_one_call_in_five(data_dir, capsys):
    report = _run(data_dir, "model", seed=3)
    _show("model", report, capsys)
    from tests.fakes.stub_server import FAILURE_MODES

    assert report["faults"] >= 0.15 * report["requests"] > 0
    assert set(FAILURE_MODES) <= set(report["served"]), report["served"]
    _assert_recovered(report)
    assert report["paid_repeated"] == 0
