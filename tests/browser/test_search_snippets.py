"""Search results quote the passage around what matched, the matched words marked."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_snippet_marks_the_matched_phrase_not_a_stop_word(
        page: Page, live_server, historian, long_archive):
    base = live_server.url
    log_in(page, base)
    page.goto(f"{base}/search/?q=le+discours+de+M.+Lejeune+des+c%C3%A9r%C3%A9ales&channel=bm25")
    marks = page.locator(".search-hit .snippet mark")
    expect(marks.first).to_be_visible()
    texts = [" ".join(text.split()) for text in marks.all_inner_texts()]
    assert "discours de M. Lejeune sur les céréales" in texts
    assert not {"des", "de", "le", "Le"} & set(texts)
    # The long filler around the passage is cut: the mark sits inside the quoted window.
    snippet = page.locator(".search-hit .snippet", has=page.locator("mark", has_text="discours"))
    quoted = snippet.first.inner_text()
    assert quoted.startswith("…") and quoted.endswith("…") and len(quoted) < 400
