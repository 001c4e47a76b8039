"""The learnt judge's model: gradient-boosted trees in LightGBM's text format, and its card.

Two files, side by side: `judge.txt` (the trees, LightGBM's own text format, read without
pickle) and `judge.json` (the card: format version, the feature list the trees were grown on,
the accept / hold / screen thresholds chosen on grouped folds, the data revision and the command
that trained it). A model whose card names other features than the engine computes, or whose
files are missing or unreadable, is refused with the file named.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from agent.engine.judge_features import FEATURES

FORMAT = 1
TREES_FILE = "judge.txt"
CARD_FILE = "judge.json"


class JudgeModelError(RuntimeError):
    """The model's files are missing, unreadable, or built for other features."""


@dataclass(frozen=True)
class Thresholds:
    """Probabilities at which a chunk is accepted, held, or (before a model call) screened out."""

    accept: float
    hold: float
    screen: float

    def shifted(self, logit_shift: float) -> Thresholds:
        """Move every threshold by the same amount on the log-odds scale."""
        def move(p: float) -> float:
            p = min(max(p, 1e-9), 1 - 1e-9)
            return 1 / (1 + math.exp(-(math.log(p / (1 - p)) + logit_shift)))
        return Thresholds(move(self.accept), move(self.hold), move(self.screen))


@dataclass(frozen=True)
class JudgeModel:
    """A loaded model: its trees, the features they read, thresholds and card."""

    booster: Any
    thresholds: Thresholds
    card: dict[str, Any] = field(default_factory=dict)

    @property
    def features(self) -> tuple[str, ...]:
        return tuple(self.card.get("features", FEATURES))

    def probabilities(self, rows: list[list[float]]) -> list[float]:
        """Return the probability, per row of features, that the chunk's document is gold."""
        if not rows:
            return []
        matrix = np.array(rows, dtype=float).reshape(len(rows), len(FEATURES))
        return [float(p) for p in self.booster.predict(matrix, num_threads=1)]


def load_trees(path: Path) -> Any:
    """Read trees in LightGBM's text format, or raise JudgeModelError naming the file."""
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    # deferred: importing lightgbm costs about 0.3 s (-X importtime), paid only by a process
    # that judges with the learnt model
    import lightgbm

    try:
        return lightgbm.Booster(model_file=str(path))
    except lightgbm.basic.LightGBMError as exc:
        raise JudgeModelError(f"{path}: unreadable trees ({exc})") from None


def load_judge_model(directory: Path) -> JudgeModel:
    """Load the model from its directory, or raise JudgeModelError naming the faulty file."""
    trees, card_path = directory / TREES_FILE, directory / CARD_FILE
    for path in (trees, card_path):
        if not path.is_file():
            raise JudgeModelError(f"{path}: missing (train it with `manage.py train_judge`)")
    try:
        card = json.loads(card_path.read_text(encoding="utf-8"))
        thresholds = Thresholds(**card["thresholds"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise JudgeModelError(f"{card_path}: unreadable card ({exc})") from None
    if card.get("format") != FORMAT:
        raise JudgeModelError(f"{card_path}: format {card.get('format')!r}, expected {FORMAT}")
    if tuple(card.get("features", ())) != FEATURES:
        raise JudgeModelError(f"{card_path}: built for other features than the engine computes; "
                              "retrain it with `manage.py train_judge`")
    booster = load_trees(trees)
    if booster.num_feature() != len(FEATURES):
        raise JudgeModelError(f"{trees}: {booster.num_feature()} features, the card names "
                              f"{len(FEATURES)}")
    return JudgeModel(booster, thresholds, card)
