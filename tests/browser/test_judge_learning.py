"""The review page says how many of the historian's decisions the judge learns from; a switch
turns the learning off and on, a reset counts afresh and keeps every decision."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from agent.models import Verdict
from tests.browser.conftest import ask, log_in

pytestmark = [pytest.mark.browser, pytest.mark.worker, pytest.mark.django_db(transaction=True)]

QUESTION = "Que disent Le Gaulois et L'Intransigeant du discours de M. Lejeune sur les céréales ?"


def test_the_judge_learns_from_the_historians_decisions_with_a_switch_and_a_reset(
        page: Page, live_server, historian, long_archive, celery_worker_process):
    base = live_server.url
    log_in(page, base)
    pk = ask(page, base, QUESTION)
    expect(page.get_by_test_id("status")).to_have_text("finished", timeout=90_000)
    # The learnt judge decided: every agent verdict carries its probability.
    judged = Verdict.objects.filter(investigation_id=pk, source=Verdict.Origin.AGENT,
                                    auto_held=False)
    assert judged.exists() and not judged.filter(probability__isnull=True).exists()

    page.goto(f"{base}/investigations/{pk}/review/")
    learning = page.get_by_test_id("judge-learning")
    expect(page.get_by_test_id("judge-learnt-count")).to_have_text("0")
    expect(learning).to_contain_text("it adapts to them once you have taken 10 more")

    # One decision on a source: the count follows.
    page.locator("form.decide button[type=submit]").first.click()
    expect(page.get_by_test_id("judge-learnt-count")).to_have_text("1")

    page.get_by_test_id("judge-learning-off").click()
    expect(learning).to_contain_text("does not learn from your decisions")
    page.get_by_test_id("judge-learning-on").click()
    expect(page.get_by_test_id("judge-learnt-count")).to_have_text("1")

    page.get_by_test_id("judge-learning-reset").click()
    expect(page.get_by_test_id("judge-learnt-count")).to_have_text("0")
    # The reset loses no decision: the historian's verdict is still in force.
    assert Verdict.objects.filter(investigation_id=pk, source=Verdict.Origin.HUMAN).count() == 1
    expect(page.locator("p.decision").filter(has_text="Decided by")).not_to_have_count(0)
