"""Talk to any OpenAI-compatible endpoint in JSON mode, with retries on transient failures.

The reply body is read and checked here, not by the client library: an endpoint (or a proxy in
front of it) may answer 200 with an HTML page, an empty body or truncated JSON. Every such reply,
like a 429, a 5xx, a timeout or a dropped connection, is retried with back-off; when the retries
run out the call fails with a ChatModelError whose message says what came back.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from agent.engine.prompting import Prompt
from agent.engine.types import ChatResult
from common.usage import TokenUsage

if TYPE_CHECKING:
    import openai

# How much of an unusable body a failure keeps, to say what came back.
BODY_EXCERPT_CHARS = 300

# 4xx statuses worth asking again: request timeout, conflict, rate limit.
RETRYABLE_CLIENT_STATUSES = frozenset({408, 409, 429})


@dataclass(frozen=True)
class FailedAttempt:
    """Describe one request that gave no usable reply, with any usage the endpoint billed."""

    reason: str
    retryable: bool
    status: int | None = None
    body: str = ""
    usage: TokenUsage = TokenUsage()
    seconds: float = 0.0


class ChatModelError(RuntimeError):
    """Signal that the model endpoint failed after every retry."""

    def __init__(self, message: str, *, attempts: int, retryable: bool,
                 failures: tuple[FailedAttempt, ...] = ()) -> None:
        super().__init__(message)
        self.attempts = attempts
        self.retryable = retryable
        self.failures = failures

    @property
    def usage(self) -> TokenUsage:
        """Return the tokens billed over the failed attempts."""
        return TokenUsage.total(f.usage for f in self.failures)

    @property
    def seconds(self) -> float:
        """Return the time spent on the failed attempts."""
        return sum(f.seconds for f in self.failures)


class UnusableReply(Exception):
    """Carry the description of a reply that is not usable API JSON."""

    def __init__(self, attempt: FailedAttempt) -> None:
        super().__init__(attempt.reason)
        self.attempt = attempt


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _usage(payload: dict[str, Any]) -> TokenUsage:
    usage = payload.get("usage")
    if not isinstance(usage, dict):
        return TokenUsage()
    details = usage.get("prompt_tokens_details")
    cached = _int(details.get("cached_tokens")) if isinstance(details, dict) else 0
    return TokenUsage(_int(usage.get("prompt_tokens")), _int(usage.get("completion_tokens")),
                      cached)


def _excerpt(body: str) -> str:
    body = " ".join(body.split())
    return body if len(body) <= BODY_EXCERPT_CHARS else body[:BODY_EXCERPT_CHARS] + "…"


def parse_reply(status: int, content_type: str, body: str, seconds: float
                ) -> tuple[str, str, TokenUsage]:
    """Return (text, model, usage) from a chat completion body, or raise UnusableReply."""

    def unusable(reason: str, usage: TokenUsage | None = None) -> UnusableReply:
        return UnusableReply(FailedAttempt(
            reason=reason, retryable=True, status=status, body=_excerpt(body),
            usage=usage or TokenUsage(), seconds=seconds))

    if not body.strip():
        raise unusable(f"an empty body (HTTP {status})")
    try:
        payload = json.loads(body)
    except ValueError:
        if body.lstrip().startswith("<") or "html" in content_type.lower():
            raise unusable(f"an HTML page instead of API JSON (HTTP {status}, "
                           f"{content_type or 'no content type'})") from None
        raise unusable(f"truncated or invalid JSON ({len(body)} characters, HTTP {status})"
                       ) from None
    if not isinstance(payload, dict):
        raise unusable(f"JSON that is not a chat completion (HTTP {status})")
    usage = _usage(payload)
    error = payload.get("error")
    if error:
        message = error.get("message") if isinstance(error, dict) else error
        raise unusable(f"an error reply: {_excerpt(str(message))} (HTTP {status})", usage)
    choices = payload.get("choices")
    message = choices[0].get("message") if (
        isinstance(choices, list) and choices and isinstance(choices[0], dict)) else None
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, str):
        raise unusable(f"a completion without choices[0].message.content (HTTP {status})", usage)
    model = payload.get("model")
    return content, model if isinstance(model, str) else "", usage


def _status_failure(exc: openai.APIStatusError, seconds: float) -> FailedAttempt:
    status = exc.status_code
    try:
        body = exc.response.text
    except Exception:  # the body could not be read; the status says enough
        body = ""
    return FailedAttempt(
        reason=f"HTTP {status} {exc.response.reason_phrase}".rstrip(),
        retryable=status in RETRYABLE_CLIENT_STATUSES or status >= 500,
        status=status, body=_excerpt(body), seconds=seconds)


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
    client: openai.OpenAI = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if not self.base_url or not self.base_url.strip():
            # The client library would fall back to its vendor's endpoint: never send there.
            raise ChatModelError("no model endpoint configured (empty base URL)", attempts=0,
                                 retryable=False)
        # deferred: importing openai costs about 0.7 s (measured with -X importtime), paid only
        # by a process that builds a client, not by every module that names ChatModelError
        import openai

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

    def attempt(self, prompt: Prompt, model: str) -> tuple[str, str, TokenUsage]:
        """Send the request once; return (text, model, usage) or raise UnusableReply."""
        import openai  # deferred: about 0.7 s to import; loaded already by __post_init__

        started = time.perf_counter()
        try:
            raw = self.client.chat.completions.with_raw_response.create(
                model=model,
                messages=[{"role": "system", "content": prompt.system},
                          {"role": "user", "content": prompt.user}],
                response_format={"type": "json_object"},
                temperature=0,
            )
            body = raw.text
        except openai.APITimeoutError:
            raise UnusableReply(FailedAttempt(
                reason=f"no reply within {self.timeout:g} s", retryable=True,
                seconds=time.perf_counter() - started)) from None
        except openai.APIStatusError as exc:
            raise UnusableReply(_status_failure(exc, time.perf_counter() - started)) from None
        except openai.APIConnectionError as exc:
            raise UnusableReply(FailedAttempt(
                reason=f"a broken connection ({exc.__cause__ or exc})", retryable=True,
                seconds=time.perf_counter() - started)) from None
        except UnicodeDecodeError:
            raise UnusableReply(FailedAttempt(
                reason="a body that is not UTF-8 text", retryable=True,
                seconds=time.perf_counter() - started)) from None
        return parse_reply(raw.status_code, raw.headers.get("content-type", ""), body,
                           time.perf_counter() - started)

    def complete(self, prompt: Prompt) -> ChatResult:
        """Send one JSON-mode request, retrying any reply that is not usable API JSON."""
        model = self.model_for(prompt.role)
        failures: list[FailedAttempt] = []
        started = time.perf_counter()
        while True:
            try:
                text, answered_by, usage = self.attempt(prompt, model)
                break
            except UnusableReply as exc:
                failures.append(exc.attempt)
                if not exc.attempt.retryable or len(failures) > self.max_retries:
                    raise self.give_up(prompt, failures) from None
            self.sleep(min(self.backoff_max, self.backoff_base * 2 ** (len(failures) - 1)))
        # Failed attempts the endpoint billed (usage without a usable reply) count as paid too.
        return ChatResult(
            text=text, model=answered_by or model,
            usage=usage + TokenUsage.total(f.usage for f in failures),
            seconds=time.perf_counter() - started)

    def give_up(self, prompt: Prompt, failures: list[FailedAttempt]) -> ChatModelError:
        """Build the readable error of a call that got no usable reply."""
        last = failures[-1]
        message = (f"The model endpoint gave no usable reply to the {prompt.name} prompt "
                   f"after {len(failures)} attempt(s); the last one returned {last.reason}")
        earlier = sorted({f.reason for f in failures[:-1]} - {last.reason})
        if earlier:
            message += f" (earlier: {'; '.join(earlier)})"
        if last.body:
            message += f". Body: {last.body}"
        return ChatModelError(message + ".", attempts=len(failures), retryable=last.retryable,
                              failures=tuple(failures))
