"""Show the prompts the LLM policy would send for a question, without calling any model.

Each decision point renders its prompt exactly as `LLMPolicy` does and hands it to `show`;
the decision itself is taken by the offline rules, so the run goes on and every later prompt
(steps, held re-evaluation, briefings, replanning, ranking) is rendered from a real state.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agent.engine.llm_policy import LLMPolicy
from agent.engine.offline import OfflinePolicy
from agent.engine.policy import (
    BriefContext,
    HeldContext,
    ModelCallSummary,
    PlanContext,
    RankContext,
    ReplanContext,
    StepContext,
)
from agent.engine.prompt_variables import (
    agent_variables,
    briefing_variables,
    held_variables,
    planner_variables,
    rank_variables,
    replan_variables,
)
from agent.engine.prompting import Prompt
from agent.engine.schemas import (
    AgentStep,
    Briefing,
    HeldReevalOutput,
    PlannerOutput,
    RankOutput,
    ReplanOutput,
)
from agent.engine.types import ChatResult


class NoModel:
    """Stand in for a chat model that must never be called."""

    def complete(self, prompt: Prompt) -> ChatResult:
        """Refuse: a preview renders prompts and sends none."""
        raise RuntimeError(f"a prompt preview calls no model (asked: {prompt.name})")


class PromptPreviewPolicy:
    """Render every prompt of the LLM policy, then decide by the offline rules."""

    name = "prompt preview (no model called)"

    def __init__(self, show: Callable[[Prompt], None], *, renderer: LLMPolicy | None = None,
                 decider: OfflinePolicy | None = None) -> None:
        self.show = show
        self.renderer = renderer or LLMPolicy(NoModel())
        self.decider = decider or OfflinePolicy()

    def _preview(self, role: str, prompt_name: str, variables: dict[str, Any]) -> None:
        self.show(self.renderer.prompt(role, prompt_name, variables))

    def plan(self, ctx: PlanContext, calls: list[ModelCallSummary]) -> PlannerOutput:
        """Show the planner prompt; plan by the rules."""
        self._preview("planner", "planner", planner_variables(ctx))
        return self.decider.plan(ctx, calls)

    def step(self, ctx: StepContext, calls: list[ModelCallSummary]) -> AgentStep:
        """Show the agent prompt; step by the rules."""
        self._preview("agent", "agent", agent_variables(ctx))
        return self.decider.step(ctx, calls)

    def reevaluate_held(self, ctx: HeldContext, calls: list[ModelCallSummary]) -> HeldReevalOutput:
        """Show the held re-evaluation prompt; re-evaluate by the rules."""
        self._preview("agent", "held", held_variables(ctx))
        return self.decider.reevaluate_held(ctx, calls)

    def brief(self, ctx: BriefContext, calls: list[ModelCallSummary]) -> Briefing:
        """Show the briefing prompt; brief by the rules."""
        self._preview("agent", "briefing", briefing_variables(ctx))
        return self.decider.brief(ctx, calls)

    def replan(self, ctx: ReplanContext, calls: list[ModelCallSummary]) -> ReplanOutput:
        """Show the replanning prompt; replan by the rules."""
        self._preview("planner", "replan", replan_variables(ctx))
        return self.decider.replan(ctx, calls)

    def rank_group(self, ctx: RankContext, calls: list[ModelCallSummary]) -> RankOutput:
        """Show the ranking prompt; rank by the rules."""
        self._preview("reranker", "rank", rank_variables(ctx))
        return self.decider.rank_group(ctx, calls)
