"""Decide through a chat model: render a prompt file, call the model, parse strictly."""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

from pydantic import BaseModel

from agent.engine.offline import OfflinePolicy
from agent.engine.parsing import parse_output
from agent.engine.policy import (
    BriefContext,
    HeldContext,
    ModelCallSummary,
    PlanContext,
    RankContext,
    ReplanContext,
    StepContext,
)
from agent.engine.ports import ChatModel
from agent.engine.prompt_variables import (
    agent_variables,
    briefing_variables,
    held_variables,
    planner_variables,
    rank_variables,
    replan_variables,
)
from agent.engine.prompting import Prompt, render_prompt
from agent.engine.schemas import (
    AgentStep,
    Briefing,
    ChunkDecision,
    HeldReevalOutput,
    PlannerOutput,
    RankOutput,
    ReplanOutput,
    ReviewArgs,
)


class LLMPolicy:
    """Make every decision with one stateless JSON-mode model call."""

    def __init__(self, chat: ChatModel, *, chunk_chars: int = 1800, held_chars: int = 400,
                 screen: OfflinePolicy | None = None) -> None:
        self.chat = chat
        self.chunk_chars = chunk_chars
        self.held_chars = held_chars
        self.screen = screen
        self.name = "LLM policy"

    def prompt(self, role: str, prompt_name: str, variables: dict[str, Any]) -> Prompt:
        """Render the prompt one decision point sends, for the role that answers it."""
        return render_prompt(prompt_name, role, chunk_chars=self.chunk_chars,
                             held_chars=self.held_chars, **variables)

    def _ask[M: BaseModel](
        self, role: str, prompt_name: str, variables: dict[str, Any], output: type[M],
        calls: list[ModelCallSummary],
    ) -> M:
        """Render, call the model, record the call, then parse (a parse error propagates)."""
        prompt = self.prompt(role, prompt_name, variables)
        started = time.perf_counter()
        result = self.chat.complete(prompt)
        calls.append(ModelCallSummary(
            role=role, prompt_name=prompt_name, prompt_hash=prompt.hash, model=result.model,
            usage=result.usage, seconds=time.perf_counter() - started))
        return parse_output(result.text, output)

    def plan(self, ctx: PlanContext, calls: list[ModelCallSummary]) -> PlannerOutput:
        """Decompose the question into sub-questions."""
        return self._ask("planner", "planner", planner_variables(ctx), PlannerOutput, calls)

    def step(self, ctx: StepContext, calls: list[ModelCallSummary]) -> AgentStep:
        """Choose the next action; figures a model writes into its verdicts are dropped.

        With a screen (the learnt judge), pending chunks it rejects with very high confidence
        never reach the model: their verdicts are the screen's, added to the model's review.
        """
        screened: list[ChunkDecision] = []
        if self.screen is not None and ctx.pending:
            kept, screened = self.screen.screened(ctx)
            if not kept:
                return AgentStep(thought="every pending chunk was screened out", action="review",
                                 args=ReviewArgs(verdicts=screened), memory_update=ctx.memory)
            ctx = replace(ctx, pending=kept)
        step = self._ask("agent", "agent", agent_variables(ctx), AgentStep, calls)
        # A reply's arguments are the JSON it wrote (a dict), checked later by the loop.
        args = step.args if isinstance(step.args, dict) else {}
        verdicts = args.get("verdicts") if step.action == "review" else None
        for verdict in verdicts if isinstance(verdicts, list) else []:
            if isinstance(verdict, dict):
                verdict.pop("signals", None)  # signals are measured, never claimed
        if screened and isinstance(verdicts, list):
            verdicts += [decision.model_dump(mode="json") for decision in screened]
        return step

    def reevaluate_held(self, ctx: HeldContext, calls: list[ModelCallSummary]) -> HeldReevalOutput:
        """Promote held chunks the accumulated evidence supports (claimed figures dropped)."""
        output = self._ask("agent", "held", held_variables(ctx), HeldReevalOutput, calls)
        return output.model_copy(update={"promotions": [
            promotion.model_copy(update={"signals": None}) for promotion in output.promotions]})

    def brief(self, ctx: BriefContext, calls: list[ModelCallSummary]) -> Briefing:
        """Write the briefing of a finished sub-question."""
        return self._ask("agent", "briefing", briefing_variables(ctx), Briefing, calls)

    def replan(self, ctx: ReplanContext, calls: list[ModelCallSummary]) -> ReplanOutput:
        """Keep or revise the remaining plan."""
        return self._ask("planner", "replan", replan_variables(ctx), ReplanOutput, calls)

    def rank_group(self, ctx: RankContext, calls: list[ModelCallSummary]) -> RankOutput:
        """Order one group of documents by their rationales."""
        return self._ask("reranker", "rank", rank_variables(ctx), RankOutput, calls)
