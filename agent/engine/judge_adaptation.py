"""Adapt the learnt judge to one historian: a shift of its log-odds fitted on their decisions.

Each decision a historian takes on a source (accept, reject, hold) is a labelled example: the
judge's probability for that source, and 1, 0 or ½. With tens of examples, not thousands, the
model's trees cannot be refitted without learning the examples by heart; one number can be
learnt from them: how much more (or less) readily this historian accepts than the judge. The
shift is the maximum of the examples' likelihood under a Gaussian prior centred on no shift
(`PRIOR_WEIGHT` examples' worth), so a few decisions move it a little and many move it more.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

PRIOR_WEIGHT = 5.0
_EPSILON = 1e-6


def _logit(p: float) -> float:
    p = min(max(p, _EPSILON), 1 - _EPSILON)
    return math.log(p / (1 - p))


def log_odds_shift(examples: Sequence[tuple[float, float]], *,
                   prior_weight: float = PRIOR_WEIGHT) -> float:
    """Return the shift b that best explains labels y from probabilities p as σ(logit p + b).

    Newton's method on the penalised log-likelihood (penalty b² · prior_weight / 2 · ¼, the
    curvature of `prior_weight` examples at p = ½); it converges in a few steps.
    """
    if not examples:
        return 0.0
    z = [_logit(p) for p, _ in examples]
    penalty = prior_weight / 4
    shift = 0.0
    for _ in range(50):
        gradient, curvature = -penalty * shift, penalty
        for zi, (_, label) in zip(z, examples, strict=True):
            q = 1 / (1 + math.exp(-(zi + shift)))
            gradient += label - q
            curvature += q * (1 - q)
        step = gradient / curvature
        shift += step
        if abs(step) < 1e-9:
            break
    return shift
