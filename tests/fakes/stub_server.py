"""Serve a tiny OpenAI-compatible chat endpoint that answers every engine prompt plausibly.

It tells prompts apart by the first line of their system prompt, which every prompt file writes
without variables (`prompt_name`): the client sends nothing meant for the stub.
Run it with ``python -m tests.fakes.stub_server --port N``; tests start it in a thread.

It can also misbehave the way real endpoints and proxies do (see FAILURE_MODES): scripted, one
fault per request (``state.faults``), or at random for a share of requests (``fail_rate`` with
``fail_modes``, seeded), e.g. ``--fail-rate 0.2 --fail-modes html,500,slow,truncated,empty``.
"""

from __future__ import annotations

import argparse
import functools
import json
import random
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from agent.engine.instant_model import plausible_reply
from agent.engine.prompting import PROMPT_DIR, Prompt


def opening_line(name: str) -> str:
    """Return the first line of a prompt's system prompt file: how the stub knows the prompt."""
    return (PROMPT_DIR / f"{name}.system.j2").read_text(encoding="utf-8").splitlines()[0].strip()


@functools.cache
def _prompt_names_by_first_line() -> dict[str, str]:
    """Map the first line of each system prompt file to the prompt's name."""
    names: dict[str, str] = {}
    for path in sorted(PROMPT_DIR.glob("*.system.j2")):
        first_line = opening_line(path.name.removesuffix(".system.j2"))
        if "{" in first_line or first_line in names:
            raise ValueError(f"{path.name}: its first line must be plain text, unique to it")
        names[first_line] = path.name.removesuffix(".system.j2")
    return names


def prompt_name(system: str) -> str:
    """Name the prompt a system prompt belongs to ("" when it is none of the engine's)."""
    return _prompt_names_by_first_line().get(system.split("\n", 1)[0].strip(), "")


# Every way the stub can fail a request, by name.
FAILURE_MODES: dict[str, str] = {
    "html": "status 200 with an HTML page (a proxy's error or login page)",
    "500": "status 500 with a JSON error body",
    "502": "status 502 with an HTML body (a gateway in front of the model)",
    "429": "status 429 (rate limited)",
    "slow": "the normal reply after slow_seconds (longer than a client's timeout)",
    "truncated": "status 200 with the reply cut in half (the length header matches the cut)",
    "cut": "status 200 whose connection closes before the announced length is sent",
    "empty": "status 200 with an empty body",
    "no_content": "status 200, API JSON with usage but no choices (billed, yet unusable)",
}


@dataclass
class StubState:
    """Hold scripted faults, the random failure settings and the requests received.

    `faults` is consumed one per request, first: an int status, ("sleep", seconds) before a
    normal reply, or a FAILURE_MODES name. Without a scripted fault, a request fails with
    probability `fail_rate`, in a mode drawn from `fail_modes`. `served` lists what each request
    got ("ok" or a mode name), in order.
    """

    faults: list[Any] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    cached_tokens: int = 0
    fail_rate: float = 0.0
    fail_modes: tuple[str, ...] = ("html", "500", "slow", "truncated", "empty")
    slow_seconds: float = 5.0
    seed: int | None = None
    served: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    rng: random.Random = field(init=False)

    def __post_init__(self) -> None:
        unknown = [mode for mode in self.fail_modes if mode not in FAILURE_MODES]
        if unknown:
            raise ValueError(f"unknown failure mode(s) {unknown}; known: {sorted(FAILURE_MODES)}")
        if not 0.0 <= self.fail_rate <= 1.0:
            raise ValueError(f"fail_rate must be between 0 and 1, got {self.fail_rate}")
        self.rng = random.Random(self.seed)

    def next_fault(self) -> Any:
        """Return the fault for the next request (None: answer normally); call under the lock."""
        if self.faults:
            return self.faults.pop(0)
        if self.fail_rate and self.fail_modes and self.rng.random() < self.fail_rate:
            return self.rng.choice(self.fail_modes)
        return None


HTML_PAGE = ("<!doctype html><html><head><title>502 Bad Gateway</title></head>"
             "<body><h1>Bad Gateway</h1><p>The upstream server is unavailable.</p></body></html>")


def _completion(state: StubState, body: dict[str, Any]) -> dict[str, Any]:
    """Build the chat completion the engine expects for one request."""
    messages = body.get("messages", [])
    system = next((m["content"] for m in messages if m.get("role") == "system"), "")
    user = next((m["content"] for m in messages if m.get("role") == "user"), "")
    text = plausible_reply(Prompt(name=prompt_name(system), role="", system=system, user=user))
    prompt_tokens = max(1, len(system + user) // 4)
    return {
        "id": f"stub-{len(state.requests)}", "object": "chat.completion",
        "created": 0, "model": body.get("model", "stub"),
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": text}}],
        "usage": {"prompt_tokens": prompt_tokens,
                  "completion_tokens": max(1, len(text) // 4),
                  "total_tokens": prompt_tokens + max(1, len(text) // 4),
                  "prompt_tokens_details": {"cached_tokens": state.cached_tokens}},
    }


def _handler(state: StubState) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            return

        def _send_bytes(self, status: int, data: bytes, content_type: str,
                        length: int | None = None) -> None:
            try:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data) if length is None else length))
                self.end_headers()
                self.wfile.write(data)
                self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                # The client gave up (a timeout under test): nothing left to answer.
                return

        def _send(self, status: int, body: dict[str, Any]) -> None:
            self._send_bytes(status, json.dumps(body).encode(), "application/json")

        def do_GET(self) -> None:  # noqa: N802
            self._send(200, {"object": "list", "data": [{"id": "stub", "object": "model"}]})

        def do_POST(self) -> None:  # noqa: N802
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
            with state.lock:
                state.requests.append(body)
                state.headers.append(dict(self.headers.items()))
                fault = state.next_fault()
                state.served.append("ok" if fault is None else
                                    f"sleep {fault[1]}" if isinstance(fault, tuple) else
                                    str(fault))
            if isinstance(fault, tuple) and fault[0] == "sleep":
                time.sleep(float(fault[1]))
            elif isinstance(fault, int) or (isinstance(fault, str) and fault.isdigit()):
                self._fail_with_status(int(fault))
                return
            elif fault is not None:
                self._fail_in_mode(str(fault), body)
                return
            self._send(200, _completion(state, body))

        def _fail_with_status(self, status: int) -> None:
            if status == 502:
                self._send_bytes(status, HTML_PAGE.encode(), "text/html; charset=utf-8")
            else:
                self._send(status, {"error": {"message": f"stub fault {status}", "type": "stub"}})

        def _fail_in_mode(self, mode: str, body: dict[str, Any]) -> None:
            completion = json.dumps(_completion(state, body))
            if mode == "html":
                self._send_bytes(200, HTML_PAGE.encode(), "text/html; charset=utf-8")
            elif mode == "slow":
                time.sleep(state.slow_seconds)
                self._send_bytes(200, completion.encode(), "application/json")
            elif mode == "truncated":
                self._send_bytes(200, completion[: len(completion) // 2].encode(),
                                 "application/json")
            elif mode == "cut":
                data = completion.encode()
                self._send_bytes(200, data[: len(data) // 2], "application/json",
                                 length=len(data))
                self.close_connection = True
            elif mode == "empty":
                self._send_bytes(200, b"", "application/json")
            elif mode == "no_content":
                usage = json.loads(completion)["usage"]
                self._send(200, {"id": "stub", "object": "chat.completion", "created": 0,
                                 "model": body.get("model", "stub"), "choices": [],
                                 "usage": usage})
            else:
                raise ValueError(f"unknown failure mode {mode!r}")

    return Handler


class StubServer:
    """Run the stub endpoint on 127.0.0.1 in a background thread."""

    def __init__(self, port: int = 0, *, fail_rate: float = 0.0,
                 fail_modes: tuple[str, ...] | None = None, slow_seconds: float = 5.0,
                 seed: int | None = None) -> None:
        self.state = (
            StubState(fail_rate=fail_rate, slow_seconds=slow_seconds, seed=seed)
            if fail_modes is None else
            StubState(fail_rate=fail_rate, slow_seconds=slow_seconds, seed=seed,
                      fail_modes=tuple(fail_modes)))
        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), _handler(self.state))
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        """Return the base URL clients use (ends with /v1)."""
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self) -> StubServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def main() -> None:
    """Serve until interrupted."""
    parser = argparse.ArgumentParser(
        description="OpenAI-compatible stub chat endpoint",
        epilog="failure modes: " + "; ".join(f"{k}: {v}" for k, v in FAILURE_MODES.items()))
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--fail-rate", type=float, default=0.0,
                        help="share of requests that fail, 0 to 1 (e.g. 0.2)")
    parser.add_argument("--fail-modes", default="html,500,slow,truncated,empty",
                        help="comma-separated failure modes drawn from at random")
    parser.add_argument("--slow-seconds", type=float, default=5.0,
                        help="how long the slow mode waits before answering")
    parser.add_argument("--seed", type=int, default=None, help="seed of the failure draws")
    args = parser.parse_args()
    state = StubState(fail_rate=args.fail_rate,
                      fail_modes=tuple(m.strip() for m in args.fail_modes.split(",") if m.strip()),
                      slow_seconds=args.slow_seconds, seed=args.seed)
    server = ThreadingHTTPServer(("127.0.0.1", args.port), _handler(state))
    faults = (f", failing {args.fail_rate:.0%} of requests as {', '.join(state.fail_modes)}"
              if args.fail_rate else "")
    print(f"stub chat endpoint on http://127.0.0.1:{args.port}/v1{faults}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


if __name__ == "__main__":
    main()
