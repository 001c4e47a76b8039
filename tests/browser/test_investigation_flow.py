"""A historian logs in, asks, watches steps arrive, opens evidence, overrides and exports."""

from __future__ import annotations

import csv
import io
import json
import time
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import Page, expect

from agent.models import Investigation
from archive.models import CorpusRevision

pytestmark = [pytest.mark.browser, pytest.mark.worker, pytest.mark.django_db(transaction=True)]

SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
QUESTION = "Que disent Le Gaulois et L'Intransigeant du discours de M. Lejeune sur les céréales ?"


@pytest.fixture
def historian(db):
    return get_user_model().objects.create_user(username="historian", password="Archives-1887")


@pytest.fixture
def archive(tiny_archive):
    CorpusRevision.objects.update_or_create(pk=1, defaults={"revision": time.time_ns()})
    return tiny_archive


def _log_in(page: Page, base: str) -> None:
    page.goto(f"{base}/investigations/")
    expect(page).to_have_url(f"{base}/accounts/login/?next=/investigations/")
    page.fill("input[name=username]", "historian")
    page.fill("input[name=password]", "Archives-1887")
    page.click("button[type=submit]")
    expect(page.get_by_role("heading", name="Investigations")).to_be_visible()


def test_ask_watch_review_override_and_export(page: Page, live_server, historian, archive,
                                              celery_worker_process, stub_llm, settings):
    settings.TRACE_LLM_BASE_URL = stub_llm.url  # new investigations use the (stub) LLM policy
    settings.TRACE_LLM_AGENT_MODEL = "stub-model"
    stub_llm.state.faults = [("sleep", 0.6)] * 8  # slow enough to watch steps arrive
    base = live_server.url
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)

    _log_in(page, base)
    page.click("text=New investigation")
    page.fill("textarea[name=question]", QUESTION)
    page.screenshot(path=SCREENSHOTS / "ask.png")
    page.click("button:has-text('Investigate')")
    expect(page.locator("h1.question")).to_have_text(QUESTION)

    # Steps arrive through HTMX polling: the page itself is never reloaded.
    page.evaluate("window.__notReloaded = true")
    first_count = page.locator("li.step").count()
    expect(page.locator('li[data-kind="verdict"]').first).to_be_visible(timeout=60_000)
    page.screenshot(path=SCREENSHOTS / "investigation.png", full_page=False)
    expect(page.get_by_test_id("status")).to_have_text("finished", timeout=90_000)
    assert page.evaluate("window.__notReloaded") is True
    assert page.locator("li.step").count() > first_count
    assert page.locator("#poller").count() == 0, "polling stops once the run has ended"

    investigation = Investigation.objects.get(owner=historian)
    assert investigation.policy == "llm" and investigation.ranked_ids

    page.click("text=Review sources")
    expect(page.locator("article.source.state-accepted").first).to_be_visible()
    page.screenshot(path=SCREENSHOTS / "review.png", full_page=True)

    # Open a source: the document viewer scrolls to the highlighted evidence chunk.
    first = page.locator("article.source.state-accepted").first
    key = first.get_attribute("data-document")
    first.locator("a.title").click()
    expect(page.locator("#highlight")).to_be_visible()
    page.go_back()

    # Override: reject the first source; the agent's verdict stays, the list reflects it.
    page.locator(f'article.source[data-document="{key}"] button:has-text("Reject")').click()
    expect(page.locator(f'article.source.state-rejected[data-document="{key}"]')).to_have_count(1)
    expect(page.locator(f'article.source[data-document="{key}"] .badge.human')).to_contain_text(
        "reject by historian")
    assert investigation.verdicts.filter(document_key=key, source="agent").exists()

    downloads = {}
    for fmt in ("bibtex", "ris", "csl-json", "csv", "markdown", "trace-json"):
        with page.expect_download() as info:
            page.click(f'a[data-format="{fmt}"]')
        downloads[fmt] = Path(info.value.path()).read_text(encoding="utf-8")
    _assert_exports_parse(downloads, rejected=key)


def _assert_exports_parse(downloads: dict[str, str], *, rejected: str) -> None:
    import bibtexparser
    import rispy

    library = bibtexparser.parse_string(downloads["bibtex"])
    assert not library.failed_blocks
    keys = {item["id"] for item in json.loads(downloads["csl-json"])}
    assert rejected not in keys
    assert {entry["id"] for entry in rispy.loads(downloads["ris"])} == keys
    rows = list(csv.DictReader(io.StringIO(downloads["csv"])))
    assert {row["key"] for row in rows} == keys
    assert len(library.entries) == len(keys)
    assert "# Sources:" in downloads["markdown"]
    trace = json.loads(downloads["trace-json"])
    assert trace["policy"] == "llm" and trace["prompts"]
