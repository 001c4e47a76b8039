"""The configured chat endpoint, recorded so that a resumed run never pays for a call twice."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db.models import Count, Max, Sum

from agent.engine.openai_chat import ChatModelError, OpenAIChatModel
from agent.engine.ports import ChatModel
from agent.engine.prompting import Prompt
from agent.engine.replay import RecordedCall, ReplayChatModel
from agent.engine.types import ChatResult
from agent.investigations.durability import with_reconnect
from agent.models import Investigation, LLMCall, PromptText
from agent.policies import NO_ENDPOINT_MESSAGE, endpoint_configured, role_models
from common.usage import TokenUsage


def stored_prompt_text(text: str) -> PromptText:
    """Return the row holding this exact text, creating it the first time it is sent."""
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    row, _ = PromptText.objects.get_or_create(sha256=digest, defaults={"text": text})
    return row


STORE_ATTEMPTS = 15  # about 15 s of database outage before a paid reply is given up


class PersistingChatModel:
    """Store every reply the moment it arrives, so a worker killed mid-step loses no paid call.

    Each call keeps its exact prompts (system and user, each distinct text stored once); a call
    that got no usable reply is stored too (succeeded=False), with whatever usage was billed.
    """

    def __init__(self, inner: ChatModel, investigation: Investigation, next_ordinal: int):
        self.inner = inner
        self.investigation = investigation
        self.next_ordinal = next_ordinal

    def complete(self, prompt: Prompt) -> ChatResult:
        """Ask the inner model, then store the reply (or the failure) before anyone parses it."""
        try:
            result = self.inner.complete(prompt)
        except ChatModelError as exc:
            self.store(prompt, response=str(exc), succeeded=False, usage=exc.usage,
                       seconds=exc.seconds)
            raise
        self.store(prompt, response=result.text, model=result.model, usage=result.usage,
                   seconds=result.seconds)
        return result

    def store(self, prompt: Prompt, *, response: str, succeeded: bool = True, model: str = "",
              usage: TokenUsage, seconds: float = 0.0) -> LLMCall:
        """Write one call with its prompts and usage, waiting out a database restart."""

        def write() -> LLMCall:
            return LLMCall.objects.create(
                investigation=self.investigation, ordinal=self.next_ordinal, role=prompt.role,
                prompt_hash=prompt.hash, system_prompt=stored_prompt_text(prompt.system),
                user_prompt=stored_prompt_text(prompt.user), model=model, response=response,
                succeeded=succeeded, **usage.as_fields(), seconds=seconds,
            )

        # The reply is paid for: keep trying for a while rather than pay for it again.
        call = with_reconnect(write, pause=1.0, attempts=STORE_ATTEMPTS)
        self.next_ordinal += 1
        return call


def resumable_chat_model(inner: ChatModel, investigation: Investigation) -> ChatModel:
    """Replay the replies already paid for, then call (and record) the real model."""
    records = investigation.llm_call_records.order_by("ordinal")
    recorded = [
        RecordedCall(call.prompt_hash, ChatResult(
            text=call.response, model=call.model, usage=call.usage, seconds=0.0))
        for call in records if call.succeeded
    ]
    last = records.aggregate(last=Max("ordinal"))["last"]
    next_ordinal = 0 if last is None else last + 1
    return ReplayChatModel(PersistingChatModel(inner, investigation, next_ordinal), recorded)


@dataclass(frozen=True)
class PaidUsage:
    """Sum what an investigation's model calls cost, failed calls included."""

    llm_calls: int
    usage: TokenUsage
    model_seconds: float
    cost: float

    def as_fields(self) -> dict[str, float | int]:
        """Return the Investigation fields these figures fill."""
        return {"llm_calls": self.llm_calls, **self.usage.as_fields(),
                "model_seconds": self.model_seconds, "cost": self.cost}


def paid_usage(investigation_id: int) -> PaidUsage:
    """Add up every stored model call of an investigation and price it."""
    sums = LLMCall.objects.filter(investigation_id=investigation_id).aggregate(
        calls=Count("id"), input=Sum("input_tokens"), output=Sum("output_tokens"),
        cached=Sum("cached_tokens"), seconds=Sum("seconds"))
    usage = TokenUsage(sums["input"] or 0, sums["output"] or 0, sums["cached"] or 0)
    policy = Investigation.objects.get(pk=investigation_id).policy_spec
    return PaidUsage(llm_calls=sums["calls"], usage=usage, model_seconds=sums["seconds"] or 0.0,
                     cost=policy.cost(usage))


def configured_chat_model(models: dict[str, str] | None = None) -> ChatModel:
    """Build the OpenAI-compatible client from TRACE_LLM_* settings.

    `models` names the model per role a run was created with (a run again may choose another
    agent model); without it, the configured role models.
    """
    base_url = (settings.TRACE_LLM_BASE_URL or "").strip()
    if not endpoint_configured() or not base_url:
        # Never fall back to a client library's default endpoint: archive text would leave
        # the instance for a third party nobody configured.
        raise ImproperlyConfigured(NO_ENDPOINT_MESSAGE)
    return OpenAIChatModel(
        base_url=base_url,
        api_key=settings.TRACE_LLM_API_KEY or "none",
        models={**role_models(), **(models or {})},
        timeout=settings.TRACE_LLM_TIMEOUT,
        max_retries=settings.TRACE_LLM_MAX_RETRIES,
    )


def failure_message(exc: BaseException) -> str:
    """Say why a run failed: the message alone when it is written for a reader."""
    if isinstance(exc, ChatModelError | ImproperlyConfigured):
        return str(exc)
    return f"{type(exc).__name__}: {exc}"
