"""The investigation page's Cancel and Resume act on a run whose worker stopped beating."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from agent.investigations import services
from agent.models import Investigation

pytestmark = pytest.mark.django_db


def _run(owner, *, status: str, beat_age: float) -> Investigation:
    return Investigation.objects.create(
        owner=owner, question="Le discours de M. Lejeune ?", status=status,
        heartbeat_at=timezone.now() - timedelta(seconds=beat_age))


def test_cancel_stops_an_abandoned_run_at_once(client, users, settings):
    run = _run(users["alice"], status="running", beat_age=settings.TRACE_SWEEP_SECONDS)
    client.force_login(users["alice"])
    client.post(f"/investigations/{run.pk}/cancel/")
    run.refresh_from_db()
    assert run.status == Investigation.Status.CANCELLED and run.finished_at is not None


def test_cancel_of_a_live_run_only_asks_it_to_stop(client, users):
    run = _run(users["alice"], status="running", beat_age=0)
    client.force_login(users["alice"])
    client.post(f"/investigations/{run.pk}/cancel/")
    run.refresh_from_db()
    assert run.status == Investigation.Status.RUNNING and run.cancel_requested


def test_resume_takes_an_abandoned_run_but_not_a_live_one(client, users, settings):
    stale = _run(users["alice"], status="running", beat_age=settings.TRACE_SWEEP_SECONDS)
    live = _run(users["alice"], status="running", beat_age=0)
    client.force_login(users["alice"])
    client.post(f"/investigations/{stale.pk}/resume/")
    client.post(f"/investigations/{live.pk}/resume/")
    stale.refresh_from_db()
    live.refresh_from_db()
    assert stale.status == Investigation.Status.QUEUED
    assert live.status == Investigation.Status.RUNNING


def test_the_sweep_interrupts_only_runs_without_a_heartbeat(users, settings):
    settings.TRACE_AUTO_RESUME_ATTEMPTS = 0  # look at the marking alone
    stale = _run(users["alice"], status="running", beat_age=settings.TRACE_SWEEP_SECONDS)
    live = _run(users["alice"], status="running", beat_age=0)
    assert services.investigations_mark_interrupted() == 1
    stale.refresh_from_db()
    live.refresh_from_db()
    assert stale.status == Investigation.Status.INTERRUPTED and "heartbeat" in stale.error
    assert live.status == Investigation.Status.RUNNING
