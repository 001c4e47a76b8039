"""Slow clients on loopback: connections trickling a login body while /healthz is timed.

An attacker holds a server's request handlers by sending a body one byte at a time: a server
that gives each connection a worker thread while it reads the body runs out of threads, and
every other page (the health check included) waits. ``measure`` opens that attack against a
TRACE instance on this machine, bounded in connections and in time, and times /healthz before,
during and after it. It refuses any address that is not loopback.
"""

from __future__ import annotations

import ipaddress
import os
import socket
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field

from measurement.evaluation.metrics import median, percentile

MAX_CONNECTIONS = 200
MAX_SECONDS = 600.0
MIN_INTERVAL = 0.1
# What each slow connection announces, so that it never finishes within the bounded run.
DECLARED_BODY_BYTES = 100_000
# What a connection trickles: its body (after whole headers), or its headers themselves.
TRICKLES = ("body", "headers")
# The endless header a connection trickles in "headers" mode, one byte at a time.
HEADER_LINE = b"X-Slow: 1\r\n"
PROBE_TIMEOUT = 10.0


class NotLoopback(ValueError):
    """The target is not an address of this machine's loopback."""


@dataclass
class Probe:
    """One /healthz request: when it was sent, how long it took, how it ended."""

    at: float
    seconds: float
    status: int | None  # None: no HTTP answer within PROBE_TIMEOUT
    error: str = ""


@dataclass
class SlowClientRun:
    """The settings and the measurements of one run."""

    url: str
    connections: int
    interval: float
    seconds: float
    trickle: str = "body"
    server: str = ""
    opened: int = 0
    closed_by_server: int = 0
    bytes_trickled: int = 0
    before: list[Probe] = field(default_factory=list)
    during: list[Probe] = field(default_factory=list)
    after: list[Probe] = field(default_factory=list)
    load_before: tuple[float, float, float] = (0.0, 0.0, 0.0)
    load_after: tuple[float, float, float] = (0.0, 0.0, 0.0)

    def worst_during(self) -> float:
        """Return the longest /healthz time during the attack (PROBE_TIMEOUT when unanswered)."""
        return max((p.seconds for p in self.during), default=0.0)

    def unanswered_during(self) -> int:
        return sum(1 for p in self.during if p.status is None)


def check_loopback(url: str) -> tuple[str, int]:
    """Return the host and port of a loopback http:// URL; refuse any other address."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme != "http" or not parts.hostname:
        raise NotLoopback(f"{url!r} is not an http:// URL")
    host = parts.hostname
    try:
        addresses = {str(info[4][0]) for info in socket.getaddrinfo(host, None)}
    except socket.gaierror as exc:
        raise NotLoopback(f"{host!r} does not resolve: {exc}") from None
    if not addresses or not all(ipaddress.ip_address(a).is_loopback for a in addresses):
        raise NotLoopback(f"{host!r} is not a loopback address ({', '.join(sorted(addresses))})")
    return host, parts.port or 80


def probe(url: str) -> tuple[Probe, str]:
    """Time one GET of /healthz; return the probe and the Server header."""
    started = time.monotonic()
    request = urllib.request.Request(urllib.parse.urljoin(url, "/healthz"))
    try:
        with urllib.request.urlopen(request, timeout=PROBE_TIMEOUT) as reply:
            reply.read()
            status, server = reply.status, reply.headers.get("Server", "")
    except urllib.error.HTTPError as exc:  # 503 is an answer: the page was served
        exc.read()
        status, server = exc.code, exc.headers.get("Server", "")
    except OSError as exc:
        return Probe(started, time.monotonic() - started, None, type(exc).__name__), ""
    return Probe(started, time.monotonic() - started, status), server


def _open_slow(host: str, port: int, trickle: str) -> socket.socket:
    """Open a login request that has sent its headers (or only its request line), no body."""
    sock = socket.create_connection((host, port), timeout=5)
    head = f"POST /accounts/login/ HTTP/1.1\r\nHost: {host}:{port}\r\n"
    if trickle == "body":
        head += ("Content-Type: application/x-www-form-urlencoded\r\n"
                 f"Content-Length: {DECLARED_BODY_BYTES}\r\n\r\n")
    sock.sendall(head.encode("ascii"))
    return sock


def _next_byte(trickle: str, sent: int) -> bytes:
    if trickle == "body":
        return b"u"
    position = sent % len(HEADER_LINE)
    return HEADER_LINE[position:position + 1]


def _probe_until(url: str, stop: threading.Event, every: float, into: list[Probe]) -> None:
    while not stop.is_set():
        into.append(probe(url)[0])
        stop.wait(every)


def measure(url: str, *, connections: int = 12, interval: float = 4.0, seconds: float = 40.0,
            trickle: str = "body", probe_every: float = 1.0,
            quiet_probes: int = 5) -> SlowClientRun:
    """Open ``connections`` slow login requests for ``seconds`` and time /healthz meanwhile."""
    host, port = check_loopback(url)
    if trickle not in TRICKLES:
        raise ValueError(f"trickle must be one of {', '.join(TRICKLES)}")
    if not 1 <= connections <= MAX_CONNECTIONS:
        raise ValueError(f"connections must be within 1..{MAX_CONNECTIONS}")
    if not 0 < seconds <= MAX_SECONDS:
        raise ValueError(f"seconds must be within (0, {MAX_SECONDS:g}]")
    if interval < MIN_INTERVAL:
        raise ValueError(f"interval must be at least {MIN_INTERVAL} s")
    run = SlowClientRun(url=url, connections=connections, interval=interval, seconds=seconds,
                        trickle=trickle)
    run.load_before = os.getloadavg()
    for _ in range(quiet_probes):
        result, server = probe(url)
        run.before.append(result)
        run.server = run.server or server
    sockets: list[socket.socket] = []
    stop = threading.Event()
    prober = threading.Thread(target=_probe_until, args=(url, stop, probe_every, run.during),
                              daemon=True)
    try:
        for _ in range(connections):
            sockets.append(_open_slow(host, port, trickle))
        run.opened = len(sockets)
        prober.start()
        deadline = time.monotonic() + seconds
        alive = list(sockets)
        sent = 0
        while time.monotonic() < deadline and alive:
            for sock in list(alive):
                try:
                    sock.sendall(_next_byte(trickle, sent))
                    run.bytes_trickled += 1
                except OSError:  # the server gave up on this connection
                    alive.remove(sock)
                    run.closed_by_server += 1
            sent += 1
            stop.wait(min(interval, max(0.0, deadline - time.monotonic())))
    finally:
        stop.set()
        if prober.is_alive():
            prober.join(PROBE_TIMEOUT + 1)
        for sock in sockets:
            sock.close()
    for _ in range(quiet_probes):
        run.after.append(probe(url)[0])
    run.load_after = os.getloadavg()
    return run


def _summary(probes: list[Probe]) -> str:
    answered = sorted(p.seconds * 1000 for p in probes if p.status is not None)
    missing = len(probes) - len(answered)
    if not answered:
        return f"{len(probes)} probes, none answered within {PROBE_TIMEOUT:g} s"
    return (f"{len(probes)} probes; median {median(answered):.0f} ms; "
            f"p95 {percentile(answered, 95):.0f} ms; max {answered[-1]:.0f} ms; unanswered within "
            f"{PROBE_TIMEOUT:g} s: {missing}")


def _what_was_sent(run: SlowClientRun) -> str:
    if run.trickle == "body":
        start = (f"{run.opened} connections each sent a login POST's headers announcing "
                 f"{DECLARED_BODY_BYTES:,} body bytes, then one body byte")
    else:
        start = (f"{run.opened} connections each sent a login POST's request line, "
                 "then one header byte")
    return (f"{start} every {run.interval:g} s for {run.seconds:g} s ({run.bytes_trickled} bytes "
            f"in all; {run.closed_by_server} closed by the server).")


def report(run: SlowClientRun, *, title: str, command: str) -> str:
    """Return the run as a Markdown section."""
    load = f"load average {run.load_before[0]:.1f} before, {run.load_after[0]:.1f} after"
    return "\n".join([
        f"### {title}",
        "",
        "```",
        command,
        "```",
        "",
        f"Server header: `{run.server or 'none'}`; {os.cpu_count()} CPUs, {load}.",
        _what_was_sent(run),
        "",
        "| /healthz | probes |",
        "|---|---|",
        f"| before | {_summary(run.before)} |",
        f"| during the slow clients | {_summary(run.during)} |",
        f"| after | {_summary(run.after)} |",
        "",
    ])
