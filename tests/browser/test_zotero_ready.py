"""The viewer is Zotero-ready: Chromium reads its citation tags with the XPath of Zotero's
"Embedded Metadata" translator (/html/head/meta, matched on the end of @name)."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import log_in
from tests.browser.test_scans_and_timeline import _petit_journal

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
# getContentText(doc, name) of the translator, run in the page.
TRANSLATOR_READ = """name => {
  const ns = document.documentElement.namespaceURI;
  const path = '/x:html/x:head/x:meta[substring(@name, string-length(@name)-'
    + (name.length - 1) + ')="' + name + '"]/@content';
  return document.evaluate(path, document, () => ns, XPathResult.STRING_TYPE, null).stringValue;
}"""


def test_a_scanned_page_is_saved_with_its_title_date_journal_and_pages(
        page: Page, live_server, historian, tmp_path):
    base = live_server.url
    document = _petit_journal(tmp_path)
    page.route("https://iiif.example.org/**", lambda route: route.abort("connectionrefused"))
    log_in(page, base)
    start = document.text.index("lundi le budget")
    end = document.text.index("Un incendie") + len("Un incendie")
    page.goto(f"{base}/archive/documents/{document.pk}/?evidence={start}-{end}")
    expect(page.locator("mark.evidence#highlight")).to_be_visible()

    def read(name: str) -> str:
        return page.evaluate(TRANSLATOR_READ, name)

    assert read("citation_title") == document.title
    assert read("citation_journal_title") == "Le Petit Journal"
    assert read("citation_date") == "1887-02-26"
    assert (read("citation_firstpage"), read("citation_lastpage")) == ("1", "2")
    assert read("citation_public_url") == (
        f"{base}/archive/documents/{document.pk}/?evidence={start}-{end}")
    assert "lundi le budget" in read("citation_abstract")
    # The tags sit in the head, where the translator looks, and nowhere else.
    assert page.locator("body meta[name^=citation_]").count() == 0
    page.set_viewport_size({"width": 1000, "height": 700})
    page.evaluate("window.scrollTo(0, 0)")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=SCREENSHOTS / "zotero-ready-viewer.png", full_page=False)
