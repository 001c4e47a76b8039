"""A finished run reads on one or two screens, and shows what the historian decided since."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from agent.models import Investigation
from tests.browser.conftest import HISTORIAN, ask, log_in

pytestmark = [pytest.mark.browser, pytest.mark.worker, pytest.mark.django_db(transaction=True)]

QUESTION = "Que disent Le Gaulois et L'Intransigeant du discours de M. Lejeune sur les céréales ?"


def test_finished_sections_fold_and_the_historians_decisions_show(
        page: Page, live_server, historian, long_archive, celery_worker_process):
    base = live_server.url
    log_in(page, base)
    pk = ask(page, base, QUESTION)
    expect(page.get_by_test_id("status")).to_have_text("finished", timeout=90_000)
    investigation = Investigation.objects.get(pk=pk)
    sections = page.locator("section.subq")
    assert sections.count() == investigation.sub_questions.count() > 1

    # Folded: the accepted rows show, the searches and the other verdicts wait behind a click.
    page.reload()
    expect(page.locator("section.subq-done")).to_have_count(sections.count())
    screen = page.viewport_size["height"]
    assert page.evaluate("document.body.scrollHeight") <= 2 * screen
    assert page.locator("li.search-line:visible").count() == 0
    assert page.locator("li.passage-reject:visible, li.passage-hold:visible").count() == 0
    accepted = page.locator("ol.accepted-rows li.passage-accept:visible")
    assert accepted.count() >= 1
    trail = sections.first.locator("details.subq-trail > summary")
    trail.click()
    expect(sections.first.locator("li.search-line").first).to_be_visible()

    # The historian rejects an accepted source: the live page says so, counts follow.
    key = accepted.first.get_attribute("data-document")
    accepted_before = int(page.locator('[data-count="accepted"]').inner_text())
    page.click("text=Review sources")
    source = page.locator(f'article.source[data-document="{key}"]')
    source.locator("form.decide button[value=reject]").click()
    expect(page.locator(f'article.source.state-rejected[data-document="{key}"]')).to_have_count(1)
    page.goto(f"{base}/investigations/{pk}/")
    row = page.locator(f'ol.accepted-rows li.passage[data-document="{key}"]').first
    expect(row.get_by_test_id("historian-decision")).to_have_text(f"rejected by {HISTORIAN}")
    expect(page.locator('[data-count="accepted"]')).to_have_text(str(accepted_before - 1))
