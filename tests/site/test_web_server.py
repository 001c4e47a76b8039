"""The embedded web server's options and its listening socket."""

from __future__ import annotations

import socket

import pytest

from trace_site.web_server import WebServerOptions, bind_listener


@pytest.mark.parametrize("field", ["threads", "connection_limit", "idle_timeout"])
def test_options_below_one_are_refused_with_their_name(field):
    with pytest.raises(ValueError, match=field.replace("_", " ")):
        WebServerOptions(**{field: 0})


def test_options_travel_as_command_line_arguments():
    options = WebServerOptions(threads=3, connection_limit=50, idle_timeout=9)
    assert options.as_arguments() == ["--threads", "3", "--connection-limit", "50",
                                      "--idle-timeout", "9"]


def test_the_listener_is_inheritable_and_a_second_bind_fails():
    listener = bind_listener("127.0.0.1", 0)
    try:
        assert listener.get_inheritable()
        port = listener.getsockname()[1]
        with pytest.raises(OSError):
            bind_listener("127.0.0.1", port)
        with socket.create_connection(("127.0.0.1", port), timeout=2):
            pass  # accepted into the queue before any web process runs
    finally:
        listener.close()


@pytest.fixture
def web_process(tmp_path):
    """One web process on its own listener, with a 1 MB application body limit."""
    import os
    import subprocess
    import sys
    import time

    listener = bind_listener("127.0.0.1", 0)
    env = {**os.environ, "TRACE_MAX_REQUEST_BYTES": "1000000", "TRACE_DATA_DIR": str(tmp_path),
           "TMPDIR": str(tmp_path)}
    process = subprocess.Popen(
        [sys.executable, "-m", "trace_site.web_server", "--fd", str(listener.fileno()),
         "--threads", "1"], pass_fds=[listener.fileno()], env=env)
    port = listener.getsockname()[1]
    listener.close()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:  # up once it answers a request it cannot parse
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=2) as probe:
                probe.sendall(b"NONSENSE\r\n\r\n")
                if probe.recv(16):
                    break
        except OSError:
            time.sleep(0.2)
    yield port
    process.terminate()
    process.wait(timeout=20)


def _exchange(port: int, head: bytes, body: bytes = b"") -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as connection:
        connection.sendall(head + body)
        received = b""
        while chunk := connection.recv(65536):
            received += chunk
        return received


def test_a_body_over_the_application_limit_is_refused_before_it_is_read(web_process):
    """The server's own limit is the application's: 1 MB here, refused from the header alone."""
    head = (b"POST /accounts/login/ HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            b"Content-Type: application/x-www-form-urlencoded\r\n"
            b"Content-Length: 1000001\r\n\r\n")
    answer = _exchange(web_process, head)  # not one byte of the body sent
    assert answer.startswith(b"HTTP/1.1 413 "), answer[:80]


def test_the_servers_own_error_pages_carry_the_csp(web_process):
    answer = _exchange(web_process, b"GET /\x01 HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                                    b"Content-Length: x\r\n\r\n")
    head = answer.split(b"\r\n\r\n", 1)[0].decode("latin-1")
    assert head.startswith("HTTP/1.1 400 "), head
    assert "Content-Security-Policy: default-src 'none';" in head
    assert "X-Content-Type-Options: nosniff" in head
