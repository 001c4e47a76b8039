"""The configured chat endpoint, recorded so that a resumed run never pays for a call twice."""

from __future__ import annotations

from django.conf import settings

from agent.engine.ports import ChatModel
from agent.engine.prompting import prompt_hash
from agent.engine.replay import RecordedCall, ReplayChatModel
from agent.engine.types import ChatResult
from agent.models import Investigation, LLMCall


class PersistingChatModel:
    """Store every reply the moment it arrives, so a worker killed mid-step loses no paid call."""

    def __init__(self, inner: ChatModel, investigation: Investigation, next_ordinal: int):
        self.inner = inner
        self.investigation = investigation
        self.next_ordinal = next_ordinal

    def complete(self, *, role: str, system: str, user: str) -> ChatResult:
        result = self.inner.complete(role=role, system=system, user=user)
        LLMCall.objects.create(
            investigation=self.investigation, ordinal=self.next_ordinal, role=role,
            prompt_hash=prompt_hash(system, user), model=result.model, response=result.text,
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

    return OpenAIChatModel(
        base_url=settings.TRACE_LLM_BASE_URL,
        api_key=settings.TRACE_LLM_API_KEY or "none",
        models={
            "planner": settings.TRACE_LLM_PLANNER_MODEL,
            "agent": settings.TRACE_LLM_AGENT_MODEL,
            "reranker": settings.TRACE_LLM_RERANKER_MODEL,
        },
        timeout=settings.TRACE_LLM_TIMEOUT,
        max_retries=settings.TRACE_LLM_MAX_RETRIES,
    )


def usage_cost(input_tokens: int, output_tokens: int) -> float:
    """Price the usage with the configured per-million-token prices."""
    from agent.engine.openai_chat import token_cost

    return token_cost(input_tokens, output_tokens, settings.TRACE_LLM_PRICE_INPUT_PER_M,
                      settings.TRACE_LLM_PRICE_OUTPUT_PER_M)
