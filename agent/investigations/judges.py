"""Which judge the offline policy runs with: the learnt model, or the rules.

The model is loaded once per process from TRACE_JUDGE_MODEL_DIR. A model that is missing,
unreadable or built for other features is reported (start-up check, /healthz, the Ask page) and
the rules judge instead: a run never fails for want of a model.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from django.conf import settings

from agent.engine.judge_model import JudgeModel, JudgeModelError, load_judge_model
from agent.engine.offline import OfflinePolicy

logger = logging.getLogger(__name__)

LEARNT = "learnt"
RULES = "rules"


@dataclass(frozen=True)
class JudgeInUse:
    """What judges offline runs on this instance, and why, in words for the pages."""

    kind: str  # LEARNT or RULES
    model: JudgeModel | None
    problem: str  # why the rules judge is in use although the learnt one was asked for

    @property
    def label(self) -> str:
        if self.kind == LEARNT:
            return "learnt judge (gradient-boosted trees trained on the engine's own signals)"
        return "rule judge" + (f" ({self.problem})" if self.problem else "")


@lru_cache(maxsize=1)
def judge_in_use() -> JudgeInUse:
    """Load the configured judge once per process."""
    if settings.TRACE_JUDGE == RULES:
        return JudgeInUse(RULES, None, "")
    try:
        model = load_judge_model(Path(settings.TRACE_JUDGE_MODEL_DIR))
    except JudgeModelError as exc:
        logger.error("learnt judge unavailable, the rule judge is in use: %s", exc)
        # Pages name the file by its place in the project, not by the server's paths.
        reason = str(exc).replace(f"{settings.BASE_DIR}/", "")
        return JudgeInUse(RULES, None, f"learnt judge unavailable: {reason}")
    return JudgeInUse(LEARNT, model, "")


def offline_policy(*, judge: str = "", shift: float | None = None) -> OfflinePolicy:
    """The offline policy with the configured judge (or `judge="rules"` for the rules).

    `shift` adapts the learnt judge to a historian: their decisions raise its log-odds by it,
    which is the same as lowering every threshold by it.
    """
    in_use = judge_in_use()
    if judge == RULES or in_use.model is None:
        return OfflinePolicy()
    thresholds = in_use.model.thresholds.shifted(-shift) if shift else None
    return OfflinePolicy(judge_model=in_use.model, thresholds=thresholds)


def model_screen() -> OfflinePolicy | None:
    """The learnt judge as a screen before a model's review (None with the rules judge)."""
    in_use = judge_in_use()
    return OfflinePolicy(judge_model=in_use.model) if in_use.model is not None else None
