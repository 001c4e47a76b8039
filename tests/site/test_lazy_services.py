"""Importing the settings starts no service; the embedded Redis starts when Celery needs it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _run(code: str, data_dir: Path, **env: str) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("TRACE_")}
    clean.update(DJANGO_SETTINGS_MODULE="trace_site.settings", TRACE_DATA_DIR=str(data_dir), **env)
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=clean, capture_output=True,
                          text=True, timeout=120)


def test_setting_up_django_and_loading_every_url_starts_and_writes_nothing(tmp_path):
    data_dir = tmp_path / "data"
    code = (
        "import django; django.setup()\n"
        "import trace_site.urls\n"
        "from trace_site.celery import app\n"
        "assert not app.configured\n"
    )
    result = _run(code, data_dir, TRACE_SECRET_KEY="test-key")
    assert result.returncode == 0, result.stderr
    assert not data_dir.exists()


def test_without_a_configured_key_the_key_is_written_on_first_use_and_kept(tmp_path):
    data_dir = tmp_path / "data"
    result = _run("import django; django.setup()", data_dir)
    assert result.returncode == 0, result.stderr
    assert not data_dir.exists()
    code = ("import django; django.setup()\n"
            "from django.conf import settings\n"
            "print(str(settings.SECRET_KEY))\n")
    first, second = _run(code, data_dir), _run(code, data_dir)
    assert first.returncode == 0 and second.returncode == 0, first.stderr + second.stderr
    assert [p.name for p in data_dir.iterdir()] == ["secret_key"]
    assert (data_dir / "secret_key").stat().st_mode & 0o777 == 0o600
    assert first.stdout == second.stdout and len(first.stdout.strip()) > 40


def test_stop_command_starts_nothing_to_stop_it(tmp_path):
    data_dir = tmp_path / "data"
    clean = {k: v for k, v in os.environ.items() if not k.startswith("TRACE_")}
    clean.update(TRACE_DATA_DIR=str(data_dir), TRACE_SECRET_KEY="test-key")
    result = subprocess.run([sys.executable, "manage.py", "stop"], cwd=ROOT, env=clean,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "Redis not running; PostgreSQL not running." in result.stdout
    assert not data_dir.exists()


@pytest.mark.worker
def test_celery_starts_the_embedded_redis_when_it_loads_its_configuration(tmp_path):
    data_dir = tmp_path / "data"
    code = (
        "import django; django.setup()\n"
        "from pathlib import Path\n"
        "from django.conf import settings\n"
        "from trace_site import embedded\n"
        "from trace_site.celery import app\n"
        "data = Path(settings.TRACE_DATA_DIR)\n"
        "assert embedded.redis_pid(data) is None\n"
        "try:\n"
        "    app.conf.broker_url\n"
        "    assert embedded.redis_pid(data) is not None\n"
        "    with app.connection_for_write() as conn:\n"
        "        conn.ensure_connection(max_retries=1)\n"
        "finally:\n"
        "    embedded.stop_redis(data)\n"
    )
    result = _run(code, data_dir, TRACE_SECRET_KEY="test-key")
    assert result.returncode == 0, result.stderr
