"""The stored event log: typed on the way out, one template per kind, older rows still readable."""

from __future__ import annotations

import importlib
import re

import pytest
from django.apps import apps as django_apps
from django.template.loader import get_template

from agent.engine.events import CATALOGUE, ModelCalled, SubQuestionFinished, VerdictGiven
from agent.engine.llm_policy import LLMPolicy
from agent.investigations import execution, services
from agent.models import Investigation, LLMCall, Step
from tests.engine.conftest import (
    briefing,
    finish,
    held,
    keep_plan,
    plan,
    rank_all,
    review_pending,
    search,
)
from tests.fakes.chat import ScriptedChatModel

QUESTION = "Que disent Le Gaulois et L'Intransigeant du discours de M. Lejeune sur les céréales ?"


def _every_kind_replies() -> list:
    """Replies that make a run emit every kind of event (a held drop and an error included)."""
    return [plan(("Lejeune céréales", "legaulois_1887_v1"),
                 ("Lejeune céréales", "lintransigeant_1887_v1")),
            review_pending("hold"), "not json",
            search("temporal", "", date_from="1887-02-26", date_to="1887-02-26"),
            review_pending("accept"), finish(), held(), "bad", "worse", keep_plan(),
            review_pending("accept"), finish(), briefing(), rank_all]


@pytest.fixture
def logged_run(users, tiny_archive):
    investigation = services.investigation_create(owner=users["alice"], question=QUESTION,
                                                  enqueue=False)
    Investigation.objects.filter(pk=investigation.pk).update(
        engine_settings={**investigation.engine_settings, "held_pool_size": 1})
    chat = ScriptedChatModel(_every_kind_replies())
    execution.investigation_execute(investigation_id=investigation.pk, retriever=tiny_archive,
                                   policy=LLMPolicy(_resumable(chat, investigation)))
    investigation.refresh_from_db()
    return investigation


def _resumable(inner, investigation):
    from agent.investigations.chat import resumable_chat_model

    return resumable_chat_model(inner, investigation)


def test_every_kind_has_its_own_template():
    for kind in CATALOGUE:
        assert get_template(f"agent/events/{kind}.html")


def test_stored_steps_read_back_as_the_events_the_engine_emitted(logged_run):
    steps = list(logged_run.steps.order_by("seq"))
    assert {step.kind for step in steps} == set(CATALOGUE)
    for step in steps:
        assert step.event.kind == step.kind and step.event.seq == step.seq
        assert step.event.payload() == step.payload


def test_each_model_reply_is_stored_once_in_the_llm_call_rows(logged_run):
    calls = [s.event for s in logged_run.steps.filter(kind=ModelCalled.kind).order_by("seq")]
    rows = list(LLMCall.objects.filter(investigation=logged_run).order_by("ordinal"))
    assert len(calls) == len(rows) == logged_run.llm_calls
    assert [c.prompt_hash for c in calls] == [r.prompt_hash for r in rows]
    assert all("response" not in s.payload for s in logged_run.steps.filter(kind="llm_call"))
    assert all(r.response for r in rows)


def test_the_event_log_writes_sentences_not_raw_data(client, users, logged_run):
    client.force_login(users["alice"])
    page = client.get(f"/investigations/{logged_run.pk}/log/").content.decode()
    for kind in CATALOGUE:
        assert f'data-kind="{kind}"' in page
    steps = page[page.index('id="steps"'):]
    steps = re.sub(r"<pre class=\"args\">.*?</pre>", "", steps, flags=re.S)  # the agent's own JSON
    assert "{&#x27;" not in steps and "{'" not in steps
    assert "left the held pool to make room" in steps
    assert "The agent finished" in steps
    assert "investigation finished" in steps


def test_steps_stored_before_the_typed_catalogue_are_migrated_and_readable(client, users):
    investigation = services.investigation_create(owner=users["alice"], question=QUESTION,
                                                  enqueue=False)
    old_rows = [
        ("subquestion_start", 0, {"text": "Lejeune", "target_sub_corpus": None,
                                  "entities": [], "target_date": None, "index": 0}),
        ("warm_start", 0, {"query": "Lejeune", "sub_corpus": None, "target_date": None,
                           "chunk_ids": [1], "document_ids": ["gaulois:1"],
                           "channel_ranks": [{"bm25": 1}]}),
        ("verdict", 0, {"chunk_id": 1, "document_id": "gaulois:1", "sub_corpus": "gaulois",
                        "verdict": "hold", "rationale": "why", "auto_held": False,
                        "source": "agent", "reason": "agent"}),
        ("held_drop", 0, {"chunk_id": 1, "document_id": "gaulois:1", "auto_held": False,
                          "pool_size": 1}),
        ("llm_call", 0, {"role": "agent", "prompt_name": "agent", "prompt_hash": "x" * 64,
                         "model": "m", "input_tokens": 5, "output_tokens": 2,
                         "cached_tokens": 0, "response": "{}", "seconds": 0.1}),
        ("finish", 0, {"reason": "budget", "effective_steps": 12, "raw_steps": 13,
                       "accepted": 0, "held": 1}),
        ("finish", None, {"status": "finished", "reason": "completed", "ranked": 0,
                          "sub_questions": 1, "llm_calls": 1, "input_tokens": 5,
                          "output_tokens": 2, "cached_tokens": 0,
                          "seconds": {"model": 0.1, "engine": 0.2}}),
    ]
    for seq, (kind, sub_question_index, payload) in enumerate(old_rows, start=1):
        Step.objects.create(investigation=investigation, seq=seq, kind=kind,
                            sub_question_index=sub_question_index, payload=payload)
    migration = importlib.import_module("agent.migrations.0003_typed_event_payloads")
    migration.forwards(django_apps, None)

    events = [step.event for step in investigation.steps.order_by("seq")]
    assert isinstance(events[2], VerdictGiven) and events[2].document_key == "gaulois:1"
    assert events[1].document_keys == ("gaulois:1",)
    assert events[3].document_key == "gaulois:1"
    assert isinstance(events[5], SubQuestionFinished) and events[5].reason == "budget"
    assert events[6].kind == "finish" and events[6].status == "finished"
    client.force_login(users["alice"])
    assert client.get(f"/investigations/{investigation.pk}/").status_code == 200
    page = client.get(f"/investigations/{investigation.pk}/log/").content.decode()
    assert page.count('class="step ') == len(old_rows)

    migration.backwards(django_apps, None)
    kinds = list(investigation.steps.order_by("seq").values_list("kind", flat=True))
    assert kinds[5] == "finish"
    assert "document_id" in investigation.steps.get(seq=3).payload
