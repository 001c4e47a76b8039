"""The configured chat endpoint, recorded so that a resumed run never pays for a call twice."""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from agent.engine.ports import ChatModel
from agent.engine.prompting import Prompt
from agent.engine.replay import RecordedCall, ReplayChatModel
from agent.engine.types import ChatResult
from agent.models import Investigation, LLMCall
from agent.policies import role_models


class PersistingChatModel:
    """Store every reply the moment it arrives, so a worker killed mid-step loses no paid call."""

    def __init__(self, inner: ChatModel, investigation: Investigation, next_ordinal: int):
        self.inner = inner
        self.investigation = investigation
        self.next_ordinal = next_ordinal

    def complete(self, prompt: Prompt) -> ChatResult:
        """Ask the inner model, then store the reply before anyone parses it."""
        result = self.inner.complete(prompt)
        LLMCall.objects.create(
            investigation=self.investigation, ordinal=self.next_ordinal, role=prompt.role,
            prompt_hash=prompt.hash, model=result.model, response=result.text,
            input_tokens=result.input_tokens, output_tokens=result.output_tokens,
            cached_tokens=result.cached_tokens, seconds=result.seconds,
        )
        self.next_ordinal += 1
        return result


def resumable_chat_model(inner: ChatModel, investigation: Investigation) -> ChatModel:
    """Replay the replies already paid for, then call (and record) the real model."""
    recorded = [
        RecordedCall(call.prompt_hash, ChatResult(
            text=call.response, model=call.model, input_tokens=call.input_tokens,
            output_tokens=call.output_tokens, cached_tokens=call.cached_tokens, seconds=0.0))
        for call in investigation.llm_call_records.order_by("ordinal")
    ]
    return ReplayChatModel(PersistingChatModel(inner, investigation, len(recorded)), recorded)


def configured_chat_model() -> ChatModel:
    """Build the OpenAI-compatible client from TRACE_LLM_* settings."""
    from agent.engine.openai_chat import OpenAIChatModel

    if not settings.TRACE_LLM_BASE_URL:
        # Never fall back to a client library's default endpoint: archive text would leave
        # the instance for a third party nobody configured.
        raise ImproperlyConfigured(
            "the LLM policy needs TRACE_LLM_BASE_URL; set it or use the offline policy"
        )
    return OpenAIChatModel(
        base_url=settings.TRACE_LLM_BASE_URL,
        api_key=settings.TRACE_LLM_API_KEY or "none",
        models=role_models(),
        timeout=settings.TRACE_LLM_TIMEOUT,
        max_retries=settings.TRACE_LLM_MAX_RETRIES,
    )
