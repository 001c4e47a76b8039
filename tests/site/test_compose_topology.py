"""docker-compose.yml's topology and the nginx front's configuration, checked without Docker."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from django.conf import settings

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
SERVICES = COMPOSE["services"]
NGINX_CONF = ROOT / "deploy" / "nginx" / "trace.conf"
APP_SERVICES = ("indexer", "web", "worker")


def _directives(text: str) -> dict[str, list[str]]:
    """Return nginx directives by name (comments dropped), each value as written."""
    found: dict[str, list[str]] = {}
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        match = re.fullmatch(r"([a-z_]+)\s+(.+);", line)
        if match:
            found.setdefault(match[1], []).append(match[2].strip())
    return found


def _index_mounts(service: dict) -> list[str]:
    """Return the mounts of the BM25 index volume in one service ("volume:path[:mode]")."""
    return [v for v in service.get("volumes", []) if v.split(":", 1)[0] == "bm25index"]


def test_the_proxy_is_the_only_published_port():
    published = {name for name, service in SERVICES.items()
                 if service.get("ports") and not service.get("profiles")}
    assert published == {"proxy"}
    assert [p.split(":")[-1] for p in SERVICES["proxy"]["ports"]] == ["8080"]
    assert "ports" not in SERVICES["web"] and SERVICES["web"].get("expose") == ["8000"]
    assert "ports" not in SERVICES["llm"], "the optional model server stays internal too"


def test_the_proxy_forwards_to_gunicorn_with_its_committed_config():
    mounted = SERVICES["proxy"]["volumes"]
    assert "./deploy/nginx/trace.conf:/etc/nginx/conf.d/default.conf:ro" in mounted
    assert "nginx" in SERVICES["proxy"]["image"]
    conf = _directives(NGINX_CONF.read_text())
    assert conf["server"] == ["web:8000"]
    assert conf["proxy_pass"] == ["http://trace_web"]
    assert conf["listen"] == ["8080"]
    web = " ".join(SERVICES["web"]["command"])
    assert "gunicorn" in web and "0.0.0.0:8000" in web


def test_nginx_buffers_and_cuts_slow_clients_off():
    conf = _directives(NGINX_CONF.read_text())
    assert conf["proxy_request_buffering"] == ["on"]
    assert conf["proxy_buffering"] == ["on"]
    for timeout in ("client_header_timeout", "client_body_timeout"):
        seconds = int(conf[timeout][0].removesuffix("s"))
        assert 0 < seconds <= 30, timeout
    assert conf["limit_conn"], "connections per client address are bounded"
    # The client's address is overwritten by nginx, never passed through from the client.
    assert "X-Real-IP $remote_addr" in conf["proxy_set_header"]


def test_nginx_body_limit_matches_the_application_limit():
    conf = _directives(NGINX_CONF.read_text())
    assert conf["client_max_body_size"] == [str(settings.TRACE_MAX_REQUEST_BYTES)]
    refusal = f"at most {settings.TRACE_MAX_REQUEST_BYTES / 1_000_000:.1f} MB accepted"
    assert refusal in NGINX_CONF.read_text()


def test_every_process_that_reads_the_index_mounts_the_one_volume_and_one_writes():
    assert "bm25index" in COMPOSE["volumes"]
    index_dir = {SERVICES[name]["environment"]["TRACE_BM25_DIR"] for name in APP_SERVICES}
    assert index_dir == {"/index/bm25"}
    writers = []
    for name in APP_SERVICES:
        mounts = _index_mounts(SERVICES[name])
        assert len(mounts) == 1, f"{name} mounts the index volume once"
        volume, path, *mode = mounts[0].split(":")
        assert path == "/index"
        if mode != ["ro"]:
            writers.append(name)
    assert writers == ["indexer"]
    assert "deploy" not in SERVICES["indexer"], "the writer is never scaled"
    for name in set(SERVICES) - set(APP_SERVICES):
        assert not _index_mounts(SERVICES[name]), f"{name} has no business with the index"


def test_the_application_trusts_the_proxy_headers_only_behind_it():
    for name in APP_SERVICES:
        env = SERVICES[name]["environment"]
        assert env["TRACE_BEHIND_PROXY"] == "true"
        assert env["TRACE_DATABASE_URL"].startswith("postgres://")
        assert env["TRACE_REDIS_URL"].startswith("redis://")


def test_every_long_running_service_has_a_healthcheck_and_starts_in_order():
    for name in ("db", "redis", "indexer", "web", "worker", "proxy"):
        assert SERVICES[name]["healthcheck"]["test"], name
    assert SERVICES["proxy"]["depends_on"]["web"]["condition"] == "service_healthy"
    for name in ("web", "worker"):
        assert SERVICES[name]["depends_on"]["indexer"]["condition"] == "service_healthy"
    for dependency in ("db", "redis"):
        assert SERVICES["indexer"]["depends_on"][dependency]["condition"] == "service_healthy"


def test_the_web_healthcheck_is_valid_python():
    test = SERVICES["web"]["healthcheck"]["test"]
    assert test[:3] == ["CMD", "python", "-c"]
    compile(test[3], "healthcheck", "exec")


def test_nginx_accepts_the_config(tmp_path):
    nginx = shutil.which("nginx")
    if nginx is None:
        pytest.skip("nginx is not installed here; the config is checked by the tests above only")
    # Outside compose the service name `web` resolves to nothing: point the upstream at loopback.
    server_block = NGINX_CONF.read_text().replace("server web:8000;", "server 127.0.0.1:8000;")
    (tmp_path / "trace.conf").write_text(server_block)
    (tmp_path / "nginx.conf").write_text(
        f"pid {tmp_path}/nginx.pid;\nerror_log {tmp_path}/error.log;\n"
        "events {}\n"
        f"http {{\n access_log off;\n client_body_temp_path {tmp_path}/body;\n"
        f" proxy_temp_path {tmp_path}/proxy;\n include {tmp_path}/trace.conf;\n}}\n")
    result = subprocess.run([nginx, "-t", "-p", str(tmp_path), "-c", str(tmp_path / "nginx.conf")],
                            capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stderr
