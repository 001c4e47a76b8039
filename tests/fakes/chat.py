"""Answer prompts from a script: replies in order, each a text, a ChatResult or a callable."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable

from agent.engine.prompting import Prompt
from agent.engine.types import ChatResult
from common.usage import TokenUsage

Reply = str | ChatResult | Callable[[Prompt], str | ChatResult]


class ScriptExhausted(RuntimeError):
    """Signal that a scripted chat model has no reply left."""


class ScriptedChatModel:
    """Return scripted replies in order; a callable reply receives the prompt it answers."""

    def __init__(self, replies: Iterable[Reply] = (), *, model: str = "scripted") -> None:
        self.replies = list(replies)
        self.model = model
        self.calls: list[Prompt] = []

    def complete(self, prompt: Prompt) -> ChatResult:
        """Serve the next scripted reply."""
        if len(self.calls) >= len(self.replies):
            raise ScriptExhausted(
                f"no scripted reply left for call {len(self.calls) + 1} ({prompt.name})")
        reply = self.replies[len(self.calls)]
        self.calls.append(prompt)
        if callable(reply):
            reply = reply(prompt)
        if isinstance(reply, ChatResult):
            return reply
        return ChatResult(text=reply, model=self.model,
                          usage=TokenUsage(len(prompt.system + prompt.user) // 4,
                                           len(reply) // 4))


def covering_reply(prompt: Prompt) -> str:
    """Answer like the instant model, but hold the second chunk of each batch.

    With a held chunk the run reaches the held re-evaluation prompt too, so a run on these
    replies sends every prompt file the policy has.
    """
    from agent.engine.instant_model import plausible_reply

    reply = plausible_reply(prompt)
    if prompt.name != "agent":
        return reply
    step = json.loads(reply)
    verdicts = step.get("args", {}).get("verdicts", [])
    if len(verdicts) >= 2:
        verdicts[1].update(verdict="hold", rationale="second of the batch")
    return json.dumps(step)
