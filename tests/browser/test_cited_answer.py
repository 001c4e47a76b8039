"""The cited answer in the browser: draft it, follow a citation to its highlighted span, see a
changed decision noticed, redraft, and find the older draft listed."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import ask, log_in

pytestmark = [pytest.mark.browser, pytest.mark.worker, pytest.mark.django_db(transaction=True)]

SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
QUESTION = "Que disent Le Gaulois et L'Intransigeant du discours de M. Lejeune sur les céréales ?"


def _numbers(page: Page) -> dict[str, int]:
    """The number each accepted source shows on the review page, by document key."""
    return {source.get_attribute("data-document"): int(source.locator(".rank").inner_text())
            for source in page.locator("#ranked article.source").all()}


def test_draft_follow_a_citation_then_redraft_after_a_decision(
        page: Page, live_server, historian, long_archive, celery_worker_process):
    base = live_server.url
    log_in(page, base)
    ask(page, base, QUESTION)
    expect(page.get_by_test_id("status")).to_have_text("finished", timeout=90_000)
    page.click("text=Review sources")
    expect(page.locator("#answer")).to_contain_text("No answer drafted yet.")

    # Draft: sentences, each followed by [n], n the source's number on this page.
    page.get_by_test_id("draft-answer").click()
    expect(page.get_by_test_id("answer-label")).to_contain_text(
        "Extractive answer: sentences quoted from the accepted sources")
    sentences = page.locator("#answer .answer-sentence")
    assert sentences.count() >= 1
    numbers = _numbers(page)
    citations = page.locator("#answer a.answer-citation")
    assert citations.count() >= len(numbers) >= 1
    for citation in citations.all():
        key = citation.get_attribute("data-document")
        assert citation.inner_text() == f"[{numbers[key]}]"
    for sentence in sentences.all():
        assert sentence.locator("a.answer-citation").count() >= 1, "every sentence is cited"
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.locator("#answer").screenshot(path=SCREENSHOTS / "answer.png")

    # A citation opens the viewer on the cited span, highlighted.
    first = citations.first
    sentence = " ".join(first.locator("xpath=..").inner_text().split())
    first.click()
    mark = page.locator("mark.evidence#highlight")
    expect(mark).to_be_visible()
    marked = " ".join(" ".join(page.locator("mark.evidence").all_inner_texts()).split())
    quoted = sentence.rsplit(" [", sentence.count(" ["))[0].removesuffix(" …")
    assert marked and (marked in quoted or quoted[:60] in marked), (marked, quoted)
    page.get_by_test_id("back-to-investigation").click()
    expect(page.get_by_test_id("answer-label")).to_be_visible()
    expect(page.get_by_test_id("answer-stale")).to_have_count(0)

    # A decision changes the accepted sources: the draft is out of date, and says so.
    rejected = page.locator("#ranked article.source").first
    key = rejected.get_attribute("data-document")
    rejected.locator("form.decide button[value=reject]").click()
    expect(page.locator(f'#ranked article.source[data-document="{key}"]')).to_have_count(0)
    expect(page.get_by_test_id("answer-stale")).to_contain_text(
        "The decisions changed since this draft")

    # Redraft: the notice goes, the rejected source is no longer cited, the old draft is listed.
    page.get_by_test_id("draft-answer").click()
    expect(page.get_by_test_id("answer-stale")).to_have_count(0)
    cited = page.locator("#answer a.answer-citation").evaluate_all(
        "links => links.map(a => a.dataset.document)")
    assert cited and key not in cited
    drafts = page.get_by_test_id("answer-drafts")
    drafts.locator("summary").click()
    items = drafts.locator("li")
    expect(items).to_have_count(2)
    expect(items.first).to_contain_text("(shown)")
    items.nth(1).locator("a").click()
    expect(page.get_by_test_id("answer-label")).to_contain_text("An earlier draft")
    expect(page.get_by_test_id("answer-stale")).to_be_visible()
    assert key in page.locator("#answer a.answer-citation").evaluate_all(
        "links => links.map(a => a.dataset.document)")
