"""The learnt judge's model: written, read without pickle, refused when it does not fit."""

from __future__ import annotations

import json
import random

import pytest

from agent.engine import OfflinePolicy, run_investigation
from agent.engine.judge_features import FEATURES
from agent.engine.judge_model import (
    CARD_FILE,
    TREES_FILE,
    JudgeModelError,
    Thresholds,
    load_judge_model,
)
from agent.engine.sinks import ListSink
from measurement.judge_training import Row, train_booster, write_model
from tests.engine.conftest import Q


def _model_dir(tmp_path):
    rng = random.Random(0)
    rows = []
    for i in range(400):
        gold = i % 10 == 0
        features = [rng.random() + (1.0 if gold and j == 1 else 0.0) for j in range(len(FEATURES))]
        rows.append(Row(f"q{i % 40}", f"d:{i}", tuple(features), gold))
    write_model(train_booster(rows), tmp_path, thresholds=Thresholds(0.5, 0.2, 0.01),
                card={"command": "test"})
    return tmp_path


def test_a_model_round_trips_through_its_text_files(tmp_path):
    model = load_judge_model(_model_dir(tmp_path))
    assert model.features == FEATURES and model.thresholds.accept == 0.5
    assert (tmp_path / TREES_FILE).read_text().startswith("tree")
    high, low = model.probabilities([[0.5, 1.5] + [0.5] * (len(FEATURES) - 2),
                                     [0.5, 0.1] + [0.5] * (len(FEATURES) - 2)])
    assert high > low


@pytest.mark.parametrize("spoil", ["missing trees", "missing card", "corrupt trees",
                                   "other features", "other format"])
def test_a_model_that_does_not_fit_is_refused_naming_its_file(tmp_path, spoil):
    directory = _model_dir(tmp_path)
    card = json.loads((directory / CARD_FILE).read_text())
    if spoil == "missing trees":
        (directory / TREES_FILE).unlink()
    elif spoil == "missing card":
        (directory / CARD_FILE).unlink()
    elif spoil == "corrupt trees":
        (directory / TREES_FILE).write_text("tree\nnot a model at all\n")
    elif spoil == "other features":
        card["features"] = card["features"][:-1] + ["document_id"]
        (directory / CARD_FILE).write_text(json.dumps(card))
    else:
        card["format"] = 99
        (directory / CARD_FILE).write_text(json.dumps(card))
    with pytest.raises(JudgeModelError) as refused:
        load_judge_model(directory)
    assert str(directory) in str(refused.value)


def test_the_learnt_judge_decides_with_its_probabilities_and_rationales_stay_true(
        tmp_path, retriever):
    model = load_judge_model(_model_dir(tmp_path))
    sink = ListSink()
    run_investigation(Q, policy=OfflinePolicy(judge_model=model), retriever=retriever, sink=sink)
    verdicts = [e for e in sink.of("verdict") if e.source == "agent"]
    assert verdicts and all(v.signals.probability is not None for v in verdicts)
    for v in verdicts:
        expected = "accept" if v.signals.probability >= 0.5 else (
            "hold" if v.signals.probability >= 0.2 else "reject")
        assert v.verdict == expected or (expected == "accept" and v.verdict == "hold")
        assert "probab" not in v.rationale and "0." not in v.rationale


def test_chunks_the_learnt_judge_screens_out_never_reach_the_model(tmp_path, retriever):
    from agent.engine import LLMPolicy
    from tests.engine.conftest import briefing, finish, plan, scripted

    model = load_judge_model(_model_dir(tmp_path))
    screen = OfflinePolicy(judge_model=model, thresholds=Thresholds(0.5, 0.2, 1.0))
    chat = scripted(plan(("Lejeune céréales", "gaulois")), finish(), briefing())
    sink = ListSink()
    run_investigation(Q, policy=LLMPolicy(chat, screen=screen), retriever=retriever, sink=sink)
    verdicts = [e for e in sink.of("verdict") if e.source == "agent"]
    assert verdicts and all(v.verdict == "reject" and "Écarté avant lecture" in v.rationale
                            for v in verdicts)
    # No review prompt was sent: the model was asked to plan, to go on, and to brief.
    assert [c.name for c in chat.calls] == ["planner", "agent", "briefing"]
    assert all(str(v.chunk_id) not in chat.calls[1].user.split("Pending")[-1]
               for v in verdicts if "Pending" in chat.calls[1].user)
