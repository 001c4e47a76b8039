"""Decide through a chat model: render a prompt file, call the model, parse strictly."""

from __future__ import annotations

import time
from dataclasses import fields
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
from agent.engine.prompting import Prompt, render_prompt
from agent.engine.schemas import (
    AgentStep,
    Briefing,
    HeldReevalOutput,
    PlannerOutput,
    RankOutput,
    ReplanOutput,
)


def _variables(ctx: Any) -> dict[str, Any]:
    """Expose a context's fields to its prompt template as they are."""
    return {f.name: getattr(ctx, f.name) for f in fields(ctx)}


class LLMPolicy:
    """Make every decision with one stateless JSON-mode model call."""

    def __init__(self, chat: ChatModel, *, chunk_chars: int = 1800, held_chars: int = 400) -> None:
        self.chat = chat
        self.chunk_chars = chunk_chars
        self.held_chars = held_chars
        self.name = "LLM policy"

    def prompt(self, role: str, prompt_name: str, ctx: Any) -> Prompt:
        """Render the prompt one decision point sends, for the role that answers it."""
        return render_prompt(prompt_name, role, chunk_chars=self.chunk_chars,
                             held_chars=self.held_chars, **_variables(ctx))

    def _ask[M: BaseModel](
        self, role: str, prompt_name: str, ctx: Any, output: type[M], calls: list[LLMCall]
    ) -> M:
        """Render, call the model, record the call, then parse (a parse error propagates)."""
        prompt = self.prompt(role, prompt_name, ctx)
        started = time.perf_counter()
        result = self.chat.complete(prompt)
        calls.append(LLMCall(
            role=role, prompt_name=prompt_name, prompt_hash=prompt.hash, model=result.model,
            input_tokens=result.input_tokens, output_tokens=result.output_tokens,
            cached_tokens=result.cached_tokens, seconds=time.perf_counter() - started))
        return parse_output(result.text, output)

    def plan(self, ctx: PlanContext, calls: list[LLMCall]) -> PlannerOutput:
        """Decompose the question into sub-questions."""
        return self._ask("planner", "planner", ctx, PlannerOutput, calls)

    def step(self, ctx: StepContext, calls: list[LLMCall]) -> AgentStep:
        """Choose the next action; figures a model writes into its verdicts are dropped."""
        step = self._ask("agent", "agent", ctx, AgentStep, calls)
        verdicts = step.args.get("verdicts") if step.action == "review" else None
        for verdict in verdicts if isinstance(verdicts, list) else []:
            if isinstance(verdict, dict):
                verdict.pop("signals", None)  # signals are measured, never claimed
        return step

    def reevaluate_held(self, ctx: HeldContext, calls: list[LLMCall]) -> HeldReevalOutput:
        """Promote held chunks the accumulated evidence supports (claimed figures dropped)."""
        output = self._ask("agent", "held", ctx, HeldReevalOutput, calls)
        return output.model_copy(update={"promotions": [
            promotion.model_copy(update={"signals": None}) for promotion in output.promotions]})

    def brief(self, ctx: BriefContext, calls: list[LLMCall]) -> Briefing:
        """Write the briefing of a finished sub-question."""
        return self._ask("agent", "briefing", ctx, Briefing, calls)

    def replan(self, ctx: ReplanContext, calls: list[LLMCall]) -> ReplanOutput:
        """Keep or revise the remaining plan."""
        return self._ask("planner", "replan", ctx, ReplanOutput, calls)

    def rank_group(self, ctx: RankContext, calls: list[LLMCall]) -> RankOutput:
        """Order one group of documents by their rationales."""
        return self._ask("reranker", "rank", ctx, RankOutput, calls)
