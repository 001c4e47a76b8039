"""The accessibility check itself: a page with a serious violation is caught, a clean one is not."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page

pytestmark = [pytest.mark.browser]

PROBE = "http://probe.invalid/"


def _serve(page: Page, html: str) -> None:
    page.route(PROBE, lambda route: route.fulfill(body=html, content_type="text/html"))
    page.goto(PROBE)


def test_a_serious_violation_is_reported_and_a_clean_page_is_not(page: Page,
                                                                  accessibility_checked):
    _serve(page, "<!doctype html><html><head><title>x</title></head>"
                 "<body><main><img src='data:,'></main></body></html>")
    found = {rule for _url, rule in accessibility_checked.violations}
    assert {"html-has-lang", "image-alt"} <= found
    accessibility_checked.violations.clear()  # caught as it should be: not this test's failure

    page.unroute(PROBE)
    _serve(page, "<!doctype html><html lang='fr'><head><title>x</title></head>"
                 "<body><main><h1>Séance</h1><img src='data:,' alt='Journal officiel'></main>"
                 "</body></html>")
    assert not accessibility_checked.violations
    assert len(accessibility_checked.checked_urls) == 2
