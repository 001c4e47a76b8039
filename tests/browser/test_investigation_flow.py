"""A historian asks and watches the investigation arrive as a story, without a reload."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from agent.models import Investigation
from archive.models import CorpusRevision
from tests.browser.conftest import ask, log_in

pytestmark = [pytest.mark.browser, pytest.mark.worker, pytest.mark.django_db(transaction=True)]

SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
QUESTION = "Que disent Le Gaulois et L'Intransigeant du discours de M. Lejeune sur les céréales ?"


@pytest.fixture
def archive(tiny_archive):
    CorpusRevision.objects.update_or_create(pk=1, defaults={"revision": time.time_ns()})
    return tiny_archive


def test_the_live_page_tells_the_run_as_a_story_and_agrees_with_the_review(
        page: Page, live_server, historian, archive, celery_worker_process, stub_llm, settings):
    settings.TRACE_LLM_BASE_URL = stub_llm.url  # new investigations use the (stub) LLM policy
    settings.TRACE_LLM_AGENT_MODEL = "stub-model"
    stub_llm.state.faults = [("sleep", 0.6)] * 8  # slow enough to watch steps arrive
    base = live_server.url
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)

    log_in(page, base)
    page.goto(f"{base}/investigations/new/")
    page.fill("textarea[name=question]", QUESTION)
    page.screenshot(path=SCREENSHOTS / "ask.png")
    pk = ask(page, base, QUESTION)

    # Steps arrive through HTMX polling: the page itself is never reloaded.
    page.evaluate("window.__notReloaded = true")
    expect(page.get_by_test_id("progress")).to_contain_text(re.compile(r"Sub-question 1 of \d"),
                                                            timeout=60_000)
    expect(page.get_by_test_id("progress")).to_contain_text(re.compile(r"step \d+ of 12 used"))
    first = page.locator("section.subq").first
    expect(first.locator("li.search-line").first).to_be_visible(timeout=60_000)
    expect(page.locator(".story-lines > li.passage:visible").first).to_be_visible(timeout=60_000)
    page.screenshot(path=SCREENSHOTS / "live.png", full_page=False)
    expect(page.get_by_test_id("status")).to_have_text("finished", timeout=90_000)
    assert page.evaluate("window.__notReloaded") is True
    assert page.locator("#poller").count() == 0, "polling stops once the run has ended"

    investigation = Investigation.objects.get(pk=pk)
    assert investigation.policy == "llm" and investigation.ranked_keys
    # One section per sub-question that ran, each search on one line with its channel.
    assert page.locator("section.subq").count() == investigation.sub_questions.count()
    searches = page.locator("li.search-line")
    assert searches.count() >= 1
    expect(searches.first.locator(".channel")).not_to_be_empty()
    # Verdicts name documents by their title, never by their key.
    titles = page.locator("li.passage .title").all_inner_texts()
    keys = set(investigation.verdicts.values_list("document_key", flat=True))
    assert titles and not keys & {title.strip() for title in titles}
    # No raw event dump anywhere in the story.
    story = page.locator("#story").inner_text()
    assert "{'" not in story and "HELD_DROP" not in story

    summary = page.get_by_test_id("summary")
    live_counts = {name: int(summary.locator(f'[data-count="{name}"]').inner_text().split()[0])
                   for name in ("accepted", "held", "rejected")}
    assert live_counts["accepted"] == len(investigation.ranked_keys)

    page.click("text=Review sources")
    expect(page.locator("article.source.state-accepted").first).to_be_visible()
    assert page.locator("#ranked article.source").count() == live_counts["accepted"]
    held_heading = page.locator("h2", has_text=re.compile(r"^Held")).inner_text()
    assert f"({live_counts['held']})" in held_heading
    rejected_heading = page.locator("details.rejected summary h2").inner_text()
    assert f"({live_counts['rejected']})" in rejected_heading
