"""Serve a tiny OpenAI-compatible chat endpoint that answers every engine prompt plausibly.

The client names each prompt in a request header, so the stub never guesses from the wording.
Run it with ``python -m tests.fakes.stub_server --port N``; tests start it in a thread.
"""

from __future__ import annotations

import argparse
import json
import re
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from agent.engine.openai_chat import PROMPT_HEADER
from agent.engine.prompting import Prompt

_SLUG = re.compile(r"slug=(\S+)")
_QUESTION = re.compile(r"^(?:Question q|Original question q): (.*)$", re.MULTILINE)
_CHUNK = re.compile(r'<document chunk_id="(\d+)"')
_RANKED = re.compile(r'<rationale document="([^"]*)"')


def plausible_reply(prompt: Prompt) -> str:
    """Return a schema-valid JSON reply for any engine prompt, chosen by the prompt's name."""
    user = prompt.user
    question_match = _QUESTION.search(user)
    question = question_match.group(1).strip() if question_match else "question"
    memory = {"prior_findings": "", "question_analysis": question[:200],
              "evidence_gathered": "", "gaps_remaining": "", "next_steps": ""}
    if prompt.name == "planner":
        slugs = _SLUG.findall(user)[:2] or [None]
        return json.dumps({"sub_questions": [
            {"text": question, "target_sub_corpus": slug, "entities": [], "target_date": None}
            for slug in slugs]})
    if prompt.name == "replan":
        return json.dumps({"remaining": None, "rationale": "plan kept"})
    if prompt.name == "held":
        return json.dumps({"promotions": [], "rationale": "nothing new"})
    if prompt.name == "briefing":
        return json.dumps({"summary": "stub briefing", "confirmed_facts": [],
                           "confirmed_dates": [], "confirmed_entities": [], "gaps": [],
                           "search_hints": []})
    if prompt.name == "rank":
        return json.dumps({"order": _RANKED.findall(user)})
    if prompt.name == "agent":
        pending = _CHUNK.findall(user)
        if pending:
            verdicts = [{"chunk_id": int(cid), "verdict": "accept" if i == 0 else "reject",
                         "rationale": "first chunk of the batch" if i == 0 else "not relevant"}
                        for i, cid in enumerate(pending)]
            return json.dumps({"thought": "review", "action": "review",
                               "args": {"verdicts": verdicts}, "memory_update": memory})
        return json.dumps({"thought": "done", "action": "finish", "args": {},
                           "memory_update": memory})
    return json.dumps({"error": f"unknown prompt {prompt.name!r}"})


@dataclass
class StubState:
    """Hold scripted faults and the requests received."""

    faults: list[Any] = field(default_factory=list)  # int status, or ("sleep", seconds)
    requests: list[dict[str, Any]] = field(default_factory=list)
    cached_tokens: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


def _handler(state: StubState) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            return

        def _send(self, status: int, body: dict[str, Any]) -> None:
            data = json.dumps(body).encode()
            try:
                self.send_response(status)
            except (BrokenPipeError, ConnectionResetError):
                return
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            try:
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                # The client gave up (a timeout under test): nothing left to answer.
                return

        def do_GET(self) -> None:  # noqa: N802
            self._send(200, {"object": "list", "data": [{"id": "stub", "object": "model"}]})

        def do_POST(self) -> None:  # noqa: N802
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
            with state.lock:
                state.requests.append(body)
                fault = state.faults.pop(0) if state.faults else None
            if isinstance(fault, tuple) and fault[0] == "sleep":
                time.sleep(float(fault[1]))
            elif isinstance(fault, int):
                self._send(fault, {"error": {"message": f"stub fault {fault}", "type": "stub"}})
                return
            messages = body.get("messages", [])
            system = next((m["content"] for m in messages if m.get("role") == "system"), "")
            user = next((m["content"] for m in messages if m.get("role") == "user"), "")
            name = self.headers.get(PROMPT_HEADER, "")
            text = plausible_reply(Prompt(name=name, role="", system=system, user=user))
            prompt_tokens = max(1, len(system + user) // 4)
            self._send(200, {
                "id": f"stub-{len(state.requests)}", "object": "chat.completion",
                "created": 0, "model": body.get("model", "stub"),
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": text}}],
                "usage": {"prompt_tokens": prompt_tokens,
                          "completion_tokens": max(1, len(text) // 4),
                          "total_tokens": prompt_tokens + max(1, len(text) // 4),
                          "prompt_tokens_details": {"cached_tokens": state.cached_tokens}},
            })

    return Handler


class StubServer:
    """Run the stub endpoint on 127.0.0.1 in a background thread."""

    def __init__(self, port: int = 0) -> None:
        self.state = StubState()
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
    parser = argparse.ArgumentParser(description="OpenAI-compatible stub chat endpoint")
    parser.add_argument("--port", type=int, default=8765)
    args = parser.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", args.port), _handler(StubState()))
    print(f"stub chat endpoint on http://127.0.0.1:{args.port}/v1", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


if __name__ == "__main__":
    main()
