"""Decide through a chat model: render a prompt file, call the model, parse strictly."""

from __future__ import annotations

import time
from dataclasses import asdict
from typing import Any

from pydantic import BaseModel

from agent.engine.parsing import parse_output
from agent.engine.policy import (
    BriefContext,
    HeldContext,
    LLMCall,
    PlanContext,
    RankContext,
    ReplanContext,
    StepContext,
)
from agent.engine.ports import ChatModel
from agent.engine.prompting import prompt_hash, render
from agent.engine.schemas import (
    AgentStep,
    Briefing,
    HeldReevalOutput,
    PlannerOutput,
    RankOutput,
    ReplanOutput,
)


class LLMPolicy:
    """Make every decision with one stateless JSON-mode model call."""

    def __init__(self, chat: ChatModel, *, chunk_chars: int = 1800, held_chars: int = 400) -> None:
        self.chat = chat
        self.chunk_chars = chunk_chars
        self.held_chars = held_chars
        self.name = "LLM policy"

    def _ask[M: BaseModel](
        self,
        *,
        role: str,
        prompt_name: str,
        variables: dict[str, Any],
        output: type[M],
        calls: list[LLMCall],
    ) -> M:
        """Render, call the model, record the call, then parse (a parse error propagates)."""
        system, user = render(
            prompt_name, chunk_chars=self.chunk_chars, held_chars=self.held_chars, **variables
        )
        started = time.perf_counter()
        result = self.chat.complete(role=role, system=system, user=user)
        seconds = time.perf_counter() - started
        calls.append(
            LLMCall(
                role=role,
                prompt_name=prompt_name,
                prompt_hash=prompt_hash(system, user),
                model=result.model,
                input_tokens=result.input_tokens,
                output_tokens=result.output_tokens,
                cached_tokens=result.cached_tokens,
                seconds=seconds,
                response=result.text,
            )
        )
        return parse_output(result.text, output)

    def plan(self, ctx: PlanContext, calls: list[LLMCall]) -> PlannerOutput:
        """Decompose the question into sub-questions."""
        return self._ask(
            role="planner",
            prompt_name="planner",
            variables=asdict(ctx),
            output=PlannerOutput,
            calls=calls,
        )

    def step(self, ctx: StepContext, calls: list[LLMCall]) -> AgentStep:
        """Choose the next action."""
        variables = {
            "question": ctx.question,
            "index": ctx.index,
            "sub_question": ctx.sub_question,
            "sub_corpora": ctx.sub_corpora,
            "briefings": ctx.briefings,
            "memory": ctx.memory,
            "action_log": ctx.action_log,
            "feedback": ctx.feedback,
            "pending": ctx.pending,
            "accepted": ctx.accepted,
            "held": ctx.held,
            "effective_step": ctx.effective_step,
            "step_budget": ctx.step_budget,
        }
        return self._ask(
            role="agent", prompt_name="agent", variables=variables, output=AgentStep, calls=calls
        )

    def reevaluate_held(self, ctx: HeldContext, calls: list[LLMCall]) -> HeldReevalOutput:
        """Promote held chunks the accumulated evidence supports."""
        variables = {
            "question": ctx.question,
            "index": ctx.index,
            "sub_question": ctx.sub_question,
            "memory": ctx.memory,
            "accepted": ctx.accepted,
            "held": ctx.held,
        }
        return self._ask(
            role="agent",
            prompt_name="held",
            variables=variables,
            output=HeldReevalOutput,
            calls=calls,
        )

    def brief(self, ctx: BriefContext, calls: list[LLMCall]) -> Briefing:
        """Write the briefing of a finished sub-question."""
        variables = {
            "question": ctx.question,
            "index": ctx.index,
            "sub_question": ctx.sub_question,
            "memory": ctx.memory,
            "accepted": ctx.accepted,
            "accepted_text": ctx.accepted_text,
            "held": ctx.held,
            "finish_reason": ctx.finish_reason,
        }
        return self._ask(
            role="agent", prompt_name="briefing", variables=variables, output=Briefing, calls=calls
        )

    def replan(self, ctx: ReplanContext, calls: list[LLMCall]) -> ReplanOutput:
        """Keep or revise the remaining plan."""
        variables = {
            "question": ctx.question,
            "sub_corpora": ctx.sub_corpora,
            "done": ctx.done,
            "accepted_counts": ctx.accepted_counts,
            "briefing": ctx.briefing,
            "remaining": ctx.remaining,
            "m_max": ctx.m_max,
        }
        return self._ask(
            role="planner",
            prompt_name="replan",
            variables=variables,
            output=ReplanOutput,
            calls=calls,
        )

    def rank_group(self, ctx: RankContext, calls: list[LLMCall]) -> RankOutput:
        """Order one group of documents by their rationales."""
        variables = {"question": ctx.question, "count": ctx.count, "items": ctx.items}
        return self._ask(
            role="reranker", prompt_name="rank", variables=variables, output=RankOutput, calls=calls
        )
