"""Judge chunks by the known answers, with a set error rate: a diagnosis tool, never a policy.

The oracle drives the same engine with the offline policy's plan, searches, briefings and
ranking, and replaces only its review decisions (and the held re-evaluation) by the gold
documents of an evaluation question. At error rate 0 it shows the ceiling of the search stage:
what a perfect judge reaches with today's searches; with an error rate each decision is flipped
with that probability (seeded per question), which gives recall against judge error. It is
registered as evaluation systems only and is no member of `PolicyKind`, so the application
never offers it.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from typing import Literal

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
from agent.engine.schemas import (
    AgentStep,
    Briefing,
    HeldReevalOutput,
    PlannerOutput,
    Promotion,
    RankOutput,
    ReplanOutput,
    ReviewArgs,
)

ORACLE_LABEL = "oracle (evaluation only)"


class OracleJudge:
    """Decide accept or reject from the gold documents, flipping each decision at `error_rate`."""

    def __init__(self, gold: Iterable[str], *, error_rate: float = 0.0, seed: str = "") -> None:
        if not 0.0 <= error_rate <= 1.0:
            raise ValueError(f"error_rate must lie in [0, 1], got {error_rate}")
        self.gold = frozenset(gold)
        self.error_rate = error_rate
        self._random = random.Random(f"oracle|{seed}")
        self.decisions = 0
        self.errors = 0

    def accepts(self, document_key: str) -> bool:
        """Return whether the document is accepted: gold is, unless this decision errs."""
        self.decisions += 1
        wrong = self.error_rate > 0 and self._random.random() < self.error_rate
        self.errors += wrong
        return (document_key in self.gold) != wrong


class OraclePolicy:
    """Run the offline policy's searches; accept and reject by an `OracleJudge`."""

    name = ORACLE_LABEL

    def __init__(self, judge: OracleJudge, base: OfflinePolicy | None = None) -> None:
        self.judge = judge
        self.base = base or OfflinePolicy()

    def plan(self, ctx: PlanContext, calls: list[ModelCallSummary]) -> PlannerOutput:
        """Plan as the offline policy does."""
        return self.base.plan(ctx, calls)

    def step(self, ctx: StepContext, calls: list[ModelCallSummary]) -> AgentStep:
        """Search as the offline policy does; give every pending chunk the judge's decision."""
        step = self.base.step(ctx, calls)
        if step.action != "review" or not isinstance(step.args, ReviewArgs):
            return step
        key_of = {hit.chunk_id: hit.document_key for hit in ctx.pending}
        accepted = {a.document_key for a in ctx.accepted}
        decisions = []
        for given in step.args.verdicts:
            document_key = key_of.get(given.chunk_id)
            decision: Literal["accept", "reject", "hold"] = "reject"
            if document_key is not None and self.judge.accepts(document_key):
                # The offline policy's cap on accepted documents per sub-question still holds.
                room = (len(accepted) < self.base.max_accepted or document_key in accepted)
                decision = "accept" if room else "hold"
                if room:
                    accepted.add(document_key)
            decisions.append(given.model_copy(update={"verdict": decision}))
        return step.model_copy(update={"args": ReviewArgs(verdicts=decisions)})

    def reevaluate_held(self, ctx: HeldContext, calls: list[ModelCallSummary]) -> HeldReevalOutput:
        """Promote the held chunks the judge accepts, while there is room."""
        accepted = {a.document_key for a in ctx.accepted}
        promotions = []
        for held in ctx.held:
            doc = held.hit.document_key
            if not self.judge.accepts(doc):
                continue
            if doc in accepted or len(accepted) < self.base.max_accepted:
                accepted.add(doc)
                promotions.append(Promotion(chunk_id=held.hit.chunk_id,
                                            rationale=held.rationale, signals=held.signals))
        return HeldReevalOutput(promotions=promotions,
                                rationale=f"{len(promotions)} promoted by the oracle")

    def brief(self, ctx: BriefContext, calls: list[ModelCallSummary]) -> Briefing:
        """Brief as the offline policy does."""
        return self.base.brief(ctx, calls)

    def replan(self, ctx: ReplanContext, calls: list[ModelCallSummary]) -> ReplanOutput:
        """Replan as the offline policy does."""
        return self.base.replan(ctx, calls)

    def rank_group(self, ctx: RankContext, calls: list[ModelCallSummary]) -> RankOutput:
        """Rank as the offline policy does."""
        return self.base.rank_group(ctx, calls)
