"""Talk to any OpenAI-compatible endpoint in JSON mode, with retries on transient failures."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import openai

from agent.engine.prompting import Prompt
from agent.engine.types import ChatResult

# Names the prompt file of every request, so an endpoint (or a test stub) can tell prompts apart.
PROMPT_HEADER = "X-Trace-Prompt"


class ChatModelError(RuntimeError):
    """Signal that the model endpoint failed after every retry."""

    def __init__(self, message: str, *, attempts: int, retryable: bool) -> None:
        super().__init__(message)
        self.attempts = attempts
        self.retryable = retryable


@dataclass
class OpenAIChatModel:
    """Complete prompts through client.chat.completions.create with response_format json."""

    base_url: str
    api_key: str
    models: dict[str, str]
    timeout: float = 60.0
    max_retries: int = 4
    backoff_base: float = 0.5
    backoff_max: float = 20.0
    sleep: Callable[[float], None] = time.sleep

    def __post_init__(self) -> None:
        # The client's own retries are off so that the loop below is the only retry policy.
        self.client = openai.OpenAI(base_url=self.base_url, api_key=self.api_key or "none",
                                    timeout=self.timeout, max_retries=0)

    def model_for(self, role: str) -> str:
        """Return the model configured for a role (falling back to "default")."""
        model = self.models.get(role) or self.models.get("default")
        if not model:
            raise ChatModelError(f"no model configured for role {role!r}", attempts=0,
                                 retryable=False)
        return model

    def complete(self, prompt: Prompt) -> ChatResult:
        """Send one JSON-mode request, retrying 429, 5xx, timeouts and connection errors."""
        model = self.model_for(prompt.role)
        attempt = 0
        started = time.perf_counter()
        while True:
            attempt += 1
            try:
                response = self.client.chat.completions.create(
                    model=model,
                    messages=[{"role": "system", "content": prompt.system},
                              {"role": "user", "content": prompt.user}],
                    response_format={"type": "json_object"},
                    temperature=0,
                    extra_headers={PROMPT_HEADER: prompt.name},
                )
                break
            except (openai.APITimeoutError, openai.APIConnectionError) as exc:
                error: Exception = exc
                retryable = True
            except openai.APIStatusError as exc:
                error = exc
                retryable = exc.status_code == 429 or exc.status_code >= 500
            if not retryable or attempt > self.max_retries:
                raise ChatModelError(
                    f"{prompt.role} call failed after {attempt} attempt(s): {error}",
                    attempts=attempt, retryable=retryable) from error
            self.sleep(min(self.backoff_max, self.backoff_base * 2 ** (attempt - 1)))
        text = response.choices[0].message.content or "" if response.choices else ""
        usage = response.usage
        details = getattr(usage, "prompt_tokens_details", None) if usage else None
        return ChatResult(
            text=text, model=response.model or model,
            input_tokens=usage.prompt_tokens if usage else 0,
            output_tokens=usage.completion_tokens if usage else 0,
            cached_tokens=int(getattr(details, "cached_tokens", 0) or 0) if details else 0,
            seconds=time.perf_counter() - started)
