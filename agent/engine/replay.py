"""Replay recorded model replies so an interrupted investigation resumes without re-asking."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from agent.engine.ports import ChatModel
from agent.engine.prompting import Prompt
from agent.engine.types import ChatResult


@dataclass(frozen=True)
class RecordedCall:
    """Pair a recorded reply with the hash of the prompt that produced it."""

    prompt_hash: str
    result: ChatResult


class RecordingChatModel:
    """Keep every reply the inner model gives, in order, the moment it arrives.

    The in-memory counterpart of a chat model that stores each paid reply before the policy
    parses it: its `recorded` calls feed a ReplayChatModel when the run is resumed.
    """

    def __init__(self, inner: ChatModel) -> None:
        self.inner = inner
        self.recorded: list[RecordedCall] = []

    def complete(self, prompt: Prompt) -> ChatResult:
        """Ask the inner model and record its reply."""
        result = self.inner.complete(prompt)
        self.recorded.append(RecordedCall(prompt.hash, result))
        return result


class ReplayChatModel:
    """Serve recorded replies in order while prompts match, then delegate to the inner model."""

    def __init__(self, inner: ChatModel, recorded: Iterable[RecordedCall]) -> None:
        self.inner = inner
        self.recorded = list(recorded)
        self.position = 0
        self.replayed = 0
        self.diverged = False

    def complete(self, prompt: Prompt) -> ChatResult:
        """Replay the next recorded reply if its prompt hash matches; otherwise ask the model."""
        if not self.diverged and self.position < len(self.recorded):
            expected = self.recorded[self.position]
            if expected.prompt_hash == prompt.hash:
                self.position += 1
                self.replayed += 1
                return expected.result
            # A different prompt means the run diverged: never replay out of step again.
            self.diverged = True
        return self.inner.complete(prompt)
