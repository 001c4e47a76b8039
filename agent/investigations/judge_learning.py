"""The learnt judge learns from the historian: their decisions as examples, one shift from them.

Every decision a historian takes on a source of their own investigation (accept, reject, hold)
is an example: the judge's probability for that document in that run, labelled 1, 0 or ½. Once
a user has `TRACE_JUDGE_MIN_OVERRIDES` of them, their new runs judge with the judge's log-odds
shifted by what the decisions say (`agent/engine/judge_adaptation.py`). Per user by default:
one historian's decisions never shape another's runs; `TRACE_JUDGE_POOL_OVERRIDES` pools every
user's decisions on this instance. Decisions through a shared link are not the owner's and are
never counted. Off switch and reset per user; a reset keeps every decision.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.db.models import F, Max, OuterRef, Subquery
from django.utils import timezone

from agent.engine.judge_adaptation import log_odds_shift
from agent.models import JudgeLearning, Verdict

LABELS: dict[str, float] = {Verdict.Decision.ACCEPT.value: 1.0,
                            Verdict.Decision.REJECT.value: 0.0, Verdict.Decision.HOLD.value: 0.5}


@dataclass(frozen=True)
class Learning:
    """What a user's new runs learn from: the count of decisions, whether on, the shift."""

    decisions: int
    enabled: bool
    shift: float | None  # None while off or below the minimum

    @property
    def needed(self) -> int:
        return max(0, settings.TRACE_JUDGE_MIN_OVERRIDES - self.decisions)


def _settings_of(user) -> JudgeLearning:
    found, _ = JudgeLearning.objects.get_or_create(user=user)
    return found


def examples(user, counted_from=None) -> list[tuple[float, float]]:
    """The decisions learnt from, as (the judge's probability, label), the latest per source.

    Only an investigation's owner decides on it: a decision through a shared link never counts.
    """
    # Only the owner's own decisions: one through a shared link is never counted.
    decisions = Verdict.objects.filter(source=Verdict.Origin.HUMAN,
                                       user_id=F("investigation__owner_id"))
    if not settings.TRACE_JUDGE_POOL_OVERRIDES:
        decisions = decisions.filter(user=user)
    if counted_from is not None:
        decisions = decisions.filter(created_at__gt=counted_from)
    judged = Verdict.objects.filter(
        investigation=OuterRef("investigation"), document_key=OuterRef("document_key"),
        source=Verdict.Origin.AGENT, probability__isnull=False,
    ).values("investigation").annotate(best=Max("probability")).values("best")
    latest: dict[tuple[int, str], tuple[float, float]] = {}
    for row in decisions.annotate(judged=Subquery(judged)).order_by("id").values(
            "investigation_id", "document_key", "decision", "judged"):
        if row["judged"] is not None:
            latest[(row["investigation_id"], row["document_key"])] = (
                row["judged"], LABELS[row["decision"]])
    return list(latest.values())


def learning_of(user) -> Learning:
    """How the judge adapts to this user's new runs."""
    chosen = _settings_of(user)
    found = examples(user, chosen.counted_from)
    shift = None
    if chosen.enabled and len(found) >= settings.TRACE_JUDGE_MIN_OVERRIDES:
        shift = log_odds_shift(found)
    return Learning(len(found), chosen.enabled, shift)


def learning_switch(*, user, enabled: bool) -> None:
    """Turn the adaptation on or off for the user's new runs."""
    chosen = _settings_of(user)
    chosen.enabled = enabled
    chosen.save(update_fields=["enabled", "updated_at"])


def learning_reset(*, user) -> None:
    """Start counting afresh: decisions taken so far are kept, no longer learnt from."""
    chosen = _settings_of(user)
    chosen.counted_from = timezone.now()
    chosen.save(update_fields=["counted_from", "updated_at"])
