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
