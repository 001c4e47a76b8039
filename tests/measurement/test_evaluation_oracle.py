"""The oracle systems are evaluation-only, and every offline miss is attributed from its events."""

from __future__ import annotations

import pytest

from agent.engine import OfflinePolicy, run_investigation
from agent.engine.events import SearchRan, VerdictGiven, WarmStartRan
from agent.engine.policy_spec import PolicyKind
from agent.engine.sinks import ListSink
from agent.investigations.forms import AskForm
from agent.policies import PolicyChoice
from measurement.evaluation.agent_systems import (
    ORACLE_ERROR_RATES,
    agent_figures,
    oracle_system_name,
)
from measurement.evaluation.metrics import miss_causes
from measurement.evaluation.systems import system_names
from tests.engine.conftest import DOCS, INFOS, Q, make_chunks
from tests.fakes.retriever import InMemoryRetriever


def test_the_oracle_curve_is_registered_as_evaluation_systems():
    names = [oracle_system_name(rate) for rate in ORACLE_ERROR_RATES]
    assert names == ["oracle", "oracle-err05", "oracle-err10", "oracle-err20", "oracle-err30"]
    assert set(names) <= set(system_names())


def test_the_oracle_is_never_a_policy_the_application_offers():
    offered = {kind.value for kind in PolicyKind} | set(PolicyChoice.values)
    assert offered == {"offline", "llm"}
    assert not any("oracle" in str(label).lower() for label in PolicyChoice.labels)
    assert "policy" not in AskForm.base_fields  # the historian never picks a policy by hand


@pytest.mark.django_db  # the figures also check the rationales' quoted words against chunks
def test_every_missed_gold_document_gets_the_furthest_stage_its_events_show():
    retriever = InMemoryRetriever(make_chunks(), INFOS)
    sink = ListSink()
    result = run_investigation(Q, policy=OfflinePolicy(), retriever=retriever, sink=sink)
    figures = agent_figures(sink.events, result)
    every_document = sorted({key for _, key, *_ in DOCS}) + ["gaulois:never-indexed"]
    ranked = list(result.ranked_document_keys)
    top = 1  # a cut-off of one leaves misses of every kind the run produced
    counts = miss_causes(ranked, every_document, accepted=figures.accepted_keys,
                         held=figures.held_keys, rejected=figures.rejected_keys, k=top)
    assert sum(counts.values()) == len(set(every_document) - set(ranked[:top]))
    surfaced = {key for e in sink.events if isinstance(e, (SearchRan, WarmStartRan))
                for key in e.document_keys}
    rejected = {e.document_key for e in sink.events
                if isinstance(e, VerdictGiven) and e.verdict == "reject"}
    assert counts["never_retrieved"] == len(set(every_document) - surfaced - set(ranked[:top]))
    assert counts["ranked_below_k"] == len(set(figures.accepted_keys) - set(ranked[:top]))
    assert counts["held_never_promoted"] == len(figures.held_keys)
    assert set(figures.rejected_keys) <= rejected
    assert counts["rejected"] == len(set(figures.rejected_keys) - set(ranked[:top]))
    assert "gaulois:never-indexed" not in surfaced
