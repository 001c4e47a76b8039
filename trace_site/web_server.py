"""The embedded default's web server: waitress on a listening socket handed down by `serve`.

waitress reads every request whole (headers and body, spilled to a temporary file past
``INBUF_OVERFLOW``) in its event loop before a worker thread sees it, and buffers each response
so that a thread never waits on a slow reader. A body larger than the application's
TRACE_MAX_REQUEST_BYTES is refused (413) from its Content-Length before it is read, so the
temporary files of bodies in flight are bounded by the connection limit times that. A client
that trickles its request therefore holds one open socket, not a thread: the Django threads stay
free for everyone else.

`serve` binds the socket once and starts several of these processes on it (each accepts from
the same queue), so a web process that crashes and is restarted loses no connection.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import socket
from dataclasses import dataclass

from django.conf import settings
from waitress.channel import HTTPChannel
from waitress.server import create_server
from waitress.task import ErrorTask

# In-memory part of a buffered request body; the rest goes to a temporary file.
INBUF_OVERFLOW = 512 * 1024


@dataclass(frozen=True)
class WebServerOptions:
    """How one web process serves: its worker threads and its connection bounds."""

    threads: int = 4
    # Open connections one process holds (slow ones included) before it stops accepting.
    connection_limit: int = 400
    # Seconds without a byte after which a connection is closed.
    idle_timeout: int = 60

    def __post_init__(self) -> None:
        for name in ("threads", "connection_limit", "idle_timeout"):
            if getattr(self, name) < 1:
                raise ValueError(f"the web server's {name.replace('_', ' ')} must be at least 1")

    def as_arguments(self) -> list[str]:
        """Return the command-line arguments that rebuild these options."""
        return ["--threads", str(self.threads), "--connection-limit", str(self.connection_limit),
                "--idle-timeout", str(self.idle_timeout)]


# waitress's own error pages (a request it cannot parse, a body over the limit) never reach Django:
# they carry here the headers Django gives every page.
ERROR_PAGE_HEADERS = (
    ("Content-Security-Policy", "default-src 'none'; base-uri 'none'; form-action 'none'; "
                                "frame-ancestors 'none'"),
    ("X-Content-Type-Options", "nosniff"),
    ("X-Frame-Options", "DENY"),
    ("Cache-Control", "no-store"),
)


class _ErrorPage(ErrorTask):
    def execute(self) -> None:
        self.response_headers.extend(ERROR_PAGE_HEADERS)
        super().execute()


class _Channel(HTTPChannel):
    error_task_class = _ErrorPage


def body_limit() -> int:
    """The largest body the server reads: the application's own limit, so that a larger one is
    refused (413) from its Content-Length, before a byte of it is buffered or spooled to disk."""
    return int(settings.TRACE_MAX_REQUEST_BYTES)


def bind_listener(host: str, port: int) -> socket.socket:
    """Bind and listen on host:port, inheritable by the web processes."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    listener = socket.socket(family, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind((host, port))
    listener.listen(1024)
    listener.set_inheritable(True)
    return listener


def serve_forever(fd: int, options: WebServerOptions) -> None:
    """Serve the Django application on the listening socket ``fd`` until terminated."""
    # deferred: importing trace_site.wsgi sets Django up and builds the application (1.3-1.6 s
    # measured with a timer); serve and the hardening report import this module to bind a socket
    from trace_site.wsgi import application

    listener = socket.socket(fileno=fd)
    server = create_server(
        application, sockets=[listener], threads=options.threads,
        connection_limit=options.connection_limit, channel_timeout=options.idle_timeout,
        max_request_body_size=body_limit(), inbuf_overflow=INBUF_OVERFLOW,
        asyncore_use_poll=True,  # select() stops at 1,024 descriptors
    )
    server.channel_class = _Channel  # type: ignore[union-attr]  # one socket: one TCP server
    server.run()  # returns on KeyboardInterrupt, after the worker threads finish


def _terminate(signum, frame) -> None:
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fd", type=int, required=True, help="an inherited listening socket")
    defaults = WebServerOptions()
    parser.add_argument("--threads", type=int, default=defaults.threads)
    parser.add_argument("--connection-limit", type=int, default=defaults.connection_limit)
    parser.add_argument("--idle-timeout", type=int, default=defaults.idle_timeout)
    args = parser.parse_args(argv)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "trace_site.settings")
    logging.basicConfig(level=logging.WARNING)
    signal.signal(signal.SIGTERM, _terminate)
    serve_forever(args.fd, WebServerOptions(threads=args.threads,
                                            connection_limit=args.connection_limit,
                                            idle_timeout=args.idle_timeout))


if __name__ == "__main__":
    main()
