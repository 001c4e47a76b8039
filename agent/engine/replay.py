"""Replay recorded model replies so an interrupted investigation resumes without re-asking."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from agent.engine.ports import ChatModel
from agent.engine.prompting import prompt_hash
from agent.engine.types import ChatResult, Event


@dataclass(frozen=True)
class RecordedCall:
    """Pair a recorded reply with the hash of the prompt that produced it."""

    prompt_hash: str
    result: ChatResult


def recorded_calls(events: Iterable[Event]) -> list[RecordedCall]:
    """Rebuild the recorded calls from persisted llm_call events, in sequence order."""
    calls = []
    for event in sorted(events, key=lambda e: e.seq):
        if event.kind != "llm_call":
            continue
        p: dict[str, Any] = event.payload
        calls.append(RecordedCall(p["prompt_hash"], ChatResult(
            text=p["response"], model=p["model"], input_tokens=p["input_tokens"],
            output_tokens=p["output_tokens"], cached_tokens=p.get("cached_tokens", 0),
            seconds=p.get("seconds", 0.0))))
    return calls


class ReplayChatModel:
    """Serve recorded replies in order while prompts match, then delegate to the inner model."""

    def __init__(self, inner: ChatModel, recorded: Iterable[RecordedCall]) -> None:
        self.inner = inner
        self.recorded = list(recorded)
        self.position = 0
        self.replayed = 0
        self.diverged = False

    def complete(self, *, role: str, system: str, user: str) -> ChatResult:
        """Replay the next recorded reply if its prompt hash matches; otherwise ask the model."""
        if not self.diverged and self.position < len(self.recorded):
            expected = self.recorded[self.position]
            if expected.prompt_hash == prompt_hash(system, user):
                self.position += 1
                self.replayed += 1
                return expected.result
            # A different prompt means the run diverged: never replay out of step again.
            self.diverged = True
        return self.inner.complete(role=role, system=system, user=user)
