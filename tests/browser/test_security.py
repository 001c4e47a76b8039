"""In Chromium: a javascript: document URL is never a live link, and no page breaks the CSP."""

from __future__ import annotations

import time

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import Page, expect

from agent.engine.offline import OfflinePolicy
from agent.investigations import execution, services
from archive.models import CorpusRevision, Document

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

QUESTION = "Que disent Le Gaulois et L'Intransigeant du discours de M. Lejeune sur les céréales ?"
HOSTILE = "  JavaScript:alert(1)"

# Records every CSP violation the page reports, before any of its own scripts run.
LISTEN = """
window.__cspViolations = [];
document.addEventListener("securitypolicyviolation", (e) => {
  window.__cspViolations.push(`${e.violatedDirective} blocked ${e.blockedURI || "inline"}`);
});
"""


@pytest.fixture
def historian(db):
    return get_user_model().objects.create_user(username="historian", password="Archives-1887")


@pytest.fixture
def finished(historian, tiny_archive):
    CorpusRevision.objects.update_or_create(pk=1, defaults={"revision": time.time_ns()})
    investigation = services.investigation_create(owner=historian, question=QUESTION,
                                                  enqueue=False)
    execution.investigation_execute(investigation_id=investigation.pk, retriever=tiny_archive,
                                   policy=OfflinePolicy())
    investigation.refresh_from_db()
    return investigation


def _document(key: str) -> Document:
    slug, external_id = key.split(":", 1)
    return Document.objects.get(sub_corpus__slug=slug, external_id=external_id)


def _live_javascript_links(page: Page) -> int:
    return page.eval_on_selector_all(
        "a[href]", "els => els.filter(a => a.protocol === 'javascript:').length")


def test_no_page_breaks_the_csp_and_no_javascript_url_is_a_link(page: Page, live_server,
                                                                finished):
    key = finished.ranked_keys[0]
    document = _document(key)
    Document.objects.filter(pk=document.pk).update(url=HOSTILE)
    console: list[str] = []
    page.on("console", lambda msg: console.append(msg.text))
    page.add_init_script(LISTEN)
    base = live_server.url

    page.goto(f"{base}/accounts/login/")
    page.fill("input[name=username]", "historian")
    page.fill("input[name=password]", "Archives-1887")
    page.click("button[type=submit]")
    expect(page.get_by_role("heading", name="Investigations")).to_be_visible()

    pages = [
        "/investigations/", "/investigations/new/", f"/investigations/{finished.pk}/",
        f"/investigations/{finished.pk}/review/",
        f"/investigations/{finished.pk}/evidence/?doc={key}",
        f"/investigations/{finished.pk}/source/?doc={key}",
        f"/archive/documents/{document.pk}/", "/archive/", f"/archive/{key.split(':')[0]}/",
        "/search/?q=Lejeune", "/investigations/batches/", "/investigations/batches/new/",
    ]
    violations: dict[str, list[str]] = {}
    for path in pages:
        response = page.goto(base + path)
        assert response is not None and response.status == 200, path
        page.wait_for_load_state("networkidle")
        for summary in page.locator("details > summary").all():
            if summary.is_visible():
                summary.click()  # content shown on demand must pass too
        found = page.evaluate("window.__cspViolations")
        if found:
            violations[path] = found
        if path.startswith(("/archive/documents/", f"/investigations/{finished.pk}/evidence/",
                            f"/investigations/{finished.pk}/source/")):
            assert _live_javascript_links(page) == 0, path
            expect(page.get_by_text("JavaScript:alert(1)").first).to_be_attached()
    assert not violations, violations
    assert not [m for m in console if "Content Security Policy" in m], console
