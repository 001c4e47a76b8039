"""A review with many held sources: ranked, paged, filtered; a source moved to any rank at once."""

from __future__ import annotations

import datetime as dt
import hashlib
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from agent.models import Investigation, Verdict
from agent.review.lists import PAGE_SIZE
from archive.models import Document, SubCorpus
from tests.browser.conftest import ask, log_in

pytestmark = [pytest.mark.browser, pytest.mark.worker, pytest.mark.django_db(transaction=True)]

SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
EXTRA = PAGE_SIZE + 8  # held sources added: a second page, and 30 on the timeline
QUESTION = "Que disent Le Gaulois et L'Intransigeant du discours de M. Lejeune sur les céréales ?"


def _more_held(investigation: Investigation, count: int) -> None:
    """Add documents the agent held, as a long run leaves them: dated over 18 days of February
    1887, so some days hold two of them."""
    sub_corpus = SubCorpus.objects.get(name="Le Gaulois")
    for i in range(count):
        text = f"Le marché aux grains du jour {i}." + (" Question des sucres." if i == 7 else "")
        document = Document.objects.create(
            sub_corpus=sub_corpus, external_id=f"extra-{i:02d}",
            title=f"Le Gaulois, supplément {i}", text=text,
            date=dt.date(1887, 2, 1) + dt.timedelta(days=i % 18), date_precision="day",
            content_hash=hashlib.sha256(text.encode()).hexdigest())
        Verdict.objects.create(investigation=investigation, document_key=document.key,
                               sub_corpus=sub_corpus.slug, sub_question_index=0, decision="hold",
                               rationale="Parle du marché aux grains.", evidence_text=text)


def test_many_held_sources_are_paged_filtered_and_one_moves_to_the_top_at_once(
        page: Page, live_server, historian, long_archive, celery_worker_process):
    base = live_server.url
    log_in(page, base)
    pk = ask(page, base, QUESTION)
    expect(page.get_by_test_id("status")).to_have_text("finished", timeout=90_000)
    investigation = Investigation.objects.get(pk=pk)
    _more_held(investigation, EXTRA)
    held_total = Verdict.objects.filter(investigation=investigation, decision="hold") \
        .values("document_key").distinct().count()

    page.goto(f"{base}/investigations/{pk}/review/")
    # The timeline of 30-odd sources: a day's held sources of one sub-corpus are one marker
    # with their count, and the crowded days are listed with a link to each source.
    days = page.get_by_test_id("timeline-days")
    listed = [text.strip() for text in days.locator("li").all_text_contents()]
    for day in range(1, EXTRA - 18 + 1):  # extra-18… share their day with extra-0…
        assert any(text.startswith(f"1887-02-{day:02d} · Le Gaulois · 2 held")
                   for text in listed), (day, listed)
    merged = sum(int(text.split(" · ")[2].split()[0]) - 1 for text in listed)
    markers = page.locator("map[name=timeline-map] area")
    placed = int(page.get_by_test_id("timeline-image").get_attribute("alt").split()[2])
    assert placed >= 30 and markers.count() == placed - merged
    assert len(set(markers.evaluate_all("els => els.map(e => e.getAttribute('coords'))"))) == (
        markers.count()), "no two markers share a place"
    page.get_by_test_id("timeline").screenshot(path=SCREENSHOTS / "timeline-at-scale.png")
    held = page.locator("#held article.source.state-held")
    expect(held).to_have_count(PAGE_SIZE)
    pager = page.get_by_test_id("pager-held").first
    expect(pager).to_contain_text(f"1–{PAGE_SIZE} of {held_total}")
    first_page = set(held.evaluate_all("els => els.map(e => e.dataset.document)"))
    pager.get_by_role("link", name="Next →").click()
    expect(held).to_have_count(held_total - PAGE_SIZE)
    second_page = set(held.evaluate_all("els => els.map(e => e.dataset.document)"))
    assert not first_page & second_page

    # The filter: only the held source that speaks of sugar.
    page.fill("#list-filter", "sucres")
    page.click("form.list-filter button[type=submit]")
    expect(held).to_have_count(1)
    expect(held.first).to_contain_text("supplément 7")

    # Accepted, it lands last among the ranked sources; one action puts it first.
    key = held.first.get_attribute("data-document")
    held.first.locator("form.decide button[value=accept]").click()
    ranked = page.locator("#ranked article.source")
    expect(ranked.last).to_have_attribute("data-document", key)
    expect(page.locator("#list-filter")).to_have_value("sucres")  # the filter is kept
    moving = page.locator(f'#ranked article.source[data-document="{key}"]')
    moving.locator("input[name=rank]").fill("1")
    moving.locator("button.move-to").click()
    expect(ranked.first).to_have_attribute("data-document", key)
    page.reload()
    expect(page.locator("#ranked article.source").first).to_have_attribute("data-document", key)
    assert page.locator("#ranked .rank").first.inner_text().strip() == "1"

    # Or dragged: the last source dropped onto the first takes its rank.
    last = ranked.last.get_attribute("data-document")
    ranked.last.drag_to(ranked.first)
    expect(ranked.first).to_have_attribute("data-document", last)
    expect(ranked.nth(1)).to_have_attribute("data-document", key)
