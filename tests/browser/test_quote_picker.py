"""The historian adjusts a source's quote in the viewer and keeps it; the agent's stays beside."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import HISTORIAN, ask, log_in

pytestmark = [pytest.mark.browser, pytest.mark.worker, pytest.mark.django_db(transaction=True)]

QUESTION = "Que disent Le Gaulois et L'Intransigeant du discours de M. Lejeune sur les céréales ?"


def _marked(page: Page) -> str:
    return " ".join(" ".join(page.locator("mark.evidence").all_inner_texts()).split())


def test_the_historian_picks_the_sentence_a_source_is_quoted_for(
        page: Page, live_server, historian, long_archive, celery_worker_process):
    base = live_server.url
    log_in(page, base)
    pk = ask(page, base, QUESTION)
    expect(page.get_by_test_id("status")).to_have_text("finished", timeout=90_000)
    page.goto(f"{base}/investigations/{pk}/review/")
    source = page.locator("#ranked article.source").first
    key = source.get_attribute("data-document")
    agent_quote = " ".join(source.locator("blockquote.evidence p").inner_text().split())

    source.locator("a.title").click()
    expect(page.locator("mark.evidence").first).to_be_visible()
    before = _marked(page)
    picker = page.get_by_test_id("quote-picker")
    picker.get_by_role("link", name="+ one after").click()
    expect(page.locator("mark.evidence").first).to_be_visible()
    longer = _marked(page)
    assert longer.startswith(before.rstrip("…")[:40]) and len(longer) > len(before)
    picker.get_by_role("button", name="Keep this as my quote").click()

    expect(page.locator("h1.question")).to_have_text(QUESTION)
    kept = page.locator(f'#ranked article.source[data-document="{key}"]')
    expect(kept.locator("blockquote.evidence footer")).to_contain_text(
        f"Quote picked by {HISTORIAN}")
    assert " ".join(kept.locator("blockquote.evidence p").inner_text().split()) == longer
    kept.locator("details.agent-quote summary").click()
    expect(kept.locator("details.agent-quote p")).to_have_text(agent_quote)

    # The cited answer quotes the kept passage: the sentence added to it is in the answer.
    added = " ".join(longer[len(before):].split())[:30]
    assert added and added not in agent_quote
    page.get_by_role("button", name="Draft the answer").click()
    answer = page.locator("section.answer .answer-body")
    expect(answer).to_contain_text(added)
