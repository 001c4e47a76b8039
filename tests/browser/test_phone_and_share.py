"""Every page fits a 375 px phone; the share link stays the same when the dialog is opened again."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import Browser, Page, expect

from agent.models import Batch, Investigation
from archive.models import Document, SubCorpus
from tests.browser.conftest import ask, log_in

pytestmark = [pytest.mark.browser, pytest.mark.worker, pytest.mark.django_db(transaction=True)]

SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
QUESTION = "Que disent Le Gaulois et L'Intransigeant du discours de M. Lejeune sur les céréales ?"
PHONE = {"width": 375, "height": 740}


def _overflow(page: Page) -> int:
    """Return how many pixels the page is wider than the viewport (0 when it fits)."""
    return page.evaluate(
        "Math.max(document.documentElement.scrollWidth, document.body.scrollWidth)"
        " - window.innerWidth")


def test_every_page_fits_a_phone_without_sideways_scrolling(
        browser: Browser, live_server, historian, long_archive, celery_worker_process):
    base = live_server.url
    context = browser.new_context(viewport=PHONE, accept_downloads=True)
    page = context.new_page()
    page.goto(f"{base}/accounts/login/")
    assert _overflow(page) <= 0, "login page"
    log_in(page, base)
    pk = ask(page, base, QUESTION)
    expect(page.get_by_test_id("status")).to_have_text("finished", timeout=90_000)
    investigation = Investigation.objects.get(pk=pk)
    key = investigation.ranked_keys[0] if investigation.ranked_keys else (
        investigation.verdicts.values_list("document_key", flat=True).first())
    document = Document.objects.select_related("sub_corpus").get(
        sub_corpus__slug=key.split(":")[0], external_id=key.split(":", 1)[1])
    # A sub-corpus with a long name: its option must not widen the Ask and search forms.
    SubCorpus.objects.create(
        slug="jorf-debats-annexes", genre="debates",
        name="Journal officiel de la République française, débats parlementaires de la Chambre "
             "des députés et documents annexés")
    # Another run of the owner's with a long question: the live page's "Compare with" select
    # lists it whole, and must not widen the page.
    Investigation.objects.create(
        owner=investigation.owner, status="finished",
        question="Comment la presse parisienne de février et mars 1887 rend-elle compte des "
                 "débats de la Chambre sur le relèvement des droits de douane sur les céréales ?")
    batch = Batch.objects.create(owner=investigation.owner, name="Questions de février")
    Investigation.objects.filter(pk=pk).update(batch=batch, qid="q-1",
                                               gold_keys=investigation.ranked_keys[:1])

    pages = {
        "investigations": "/investigations/",
        "ask": "/investigations/new/",
        "live": f"/investigations/{pk}/",
        "review": f"/investigations/{pk}/review/",
        "evidence path": f"/investigations/{pk}/evidence/?doc={key}",
        "viewer": f"/investigations/{pk}/source/?doc={key}",
        "archive": "/archive/",
        "sub-corpus": f"/archive/{document.sub_corpus.slug}/",
        "search": "/search/?q=Lejeune+c%C3%A9r%C3%A9ales&channel=bm25",
        "batches": "/investigations/batches/",
        "batch": f"/investigations/batches/{batch.pk}/",
        "new batch": "/investigations/batches/new/",
        "run again": f"/investigations/{pk}/again/",
        "comparison": f"/investigations/compare/?a={pk}&b={pk}",
        "run the batch again": f"/investigations/batches/{batch.pk}/again/",
        "batch comparison": f"/investigations/batches/compare/?a={batch.pk}&b={batch.pk}",
    }
    for name, path in pages.items():
        page.goto(base + path)
        page.wait_for_load_state("networkidle")
        assert _overflow(page) <= 0, f"the {name} page is wider than the phone"
        if name == "review" and page.get_by_test_id("timeline-image").count():
            # The timeline shrinks to the phone's width, its markers' links with it.
            image = page.get_by_test_id("timeline-image")
            box = image.bounding_box()
            assert box is not None and box["x"] + box["width"] <= PHONE["width"]
            drawn = int(image.get_attribute("width"))
            area = page.locator("map[name=timeline-map] area").first
            x, y, radius = (int(v) for v in area.get_attribute("coords").split(","))
            x0, y0, _ = (int(v) for v in area.get_attribute("data-coords").split(","))
            assert abs(x - round(x0 * box["width"] / drawn)) <= 3 and radius < 8
        if name == "live":
            expect(page.locator(".compare-with select")).to_be_visible()
            page.screenshot(path=SCREENSHOTS / "phone-live.png", full_page=False)
    # The top bar wraps: every link and the log-out button stay on screen.
    page.goto(f"{base}/investigations/")
    for item in page.locator(".topbar a, .topbar button").all():
        box = item.bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"]
    context.close()


def test_the_share_link_is_stable_and_opens_a_read_only_view(
        browser: Browser, page: Page, live_server, historian, long_archive,
        celery_worker_process):
    base = live_server.url
    log_in(page, base)
    pk = ask(page, base, QUESTION)
    expect(page.get_by_test_id("status")).to_have_text("finished", timeout=90_000)

    page.locator("details.share summary").click()
    page.click("button:has-text('Create read-only link')")
    link = page.locator("#share-link")
    expect(link).to_be_visible()
    first = link.input_value()
    assert re.search(rf"/investigations/{pk}/\?token=\S+$", first)
    page.click("button[data-copy]")
    expect(page.locator("[data-copy-status]")).to_have_text("Link copied.")

    # Open the dialog again, later: the same link, still working.
    page.goto(f"{base}/investigations/{pk}/")
    page.locator("details.share summary").click()
    assert page.locator("#share-link").input_value() == first
    assert page.locator("button:has-text('Create read-only link')").count() == 0

    get_user_model().objects.create_user(username="colleague", password="Colleague-1887")
    other = browser.new_context()
    colleague = other.new_page()
    log_in(colleague, base, "colleague", "Colleague-1887")
    colleague.goto(first)
    expect(colleague.get_by_test_id("shared-banner")).to_contain_text("historian")
    expect(colleague.get_by_test_id("shared-banner")).to_contain_text("read-only")
    assert colleague.locator("details.share").count() == 0
    colleague.click("text=Review sources")
    expect(colleague.get_by_test_id("shared-banner")).to_be_visible()
    assert colleague.locator("form.decide, form.note-form").count() == 0
    other.close()
