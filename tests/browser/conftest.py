"""Playwright drives Debian's Chromium against Django's live server and a real worker."""

from __future__ import annotations

import os
import shutil

import pytest

# Playwright's sync API runs an event loop in the test thread; the ORM calls the tests make
# between browser actions are plain synchronous calls.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    if not os.path.exists(CHROMIUM):
        pytest.fail("Chromium is missing: install Debian's `chromium` (see .ci/run)")
    return {
        **browser_type_launch_args,
        "executable_path": CHROMIUM,
        "args": ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"],
    }


@pytest.fixture(autouse=True)
def accessibility_checked(browser):
    """Run axe-core in every page this test opens; fail on a serious or critical violation.

    Every context the test makes (the `page` fixture's or `browser.new_context()`) gets axe and
    its runner; each page checks itself after it loads and after each HTMX swap, `goto` waits
    for that first check, and closing a context checks its pages' last state.
    """
    from tests.browser.accessibility import AccessibilityLog, check_now, init_script

    log = AccessibilityLog()
    script = init_script()
    original_new_context = browser.new_context

    def watched_page(page):
        if getattr(page, "_trace_axe_watched", False):
            return page
        page._trace_axe_watched = True
        original_goto = page.goto

        def goto(url, **kwargs):
            response = original_goto(url, **kwargs)
            if response is not None and "html" in (response.headers.get("content-type") or ""):
                page.wait_for_function("() => window.__traceAxeChecks > 0", timeout=30_000)
            return response

        page.goto = goto
        return page

    def new_context(**kwargs):
        context = original_new_context(**kwargs)
        context.expose_binding("__traceAxeReport", log.report)
        context.add_init_script(script=script)
        context.on("page", watched_page)
        original_new_page = context.new_page
        context.new_page = lambda **page_kwargs: watched_page(original_new_page(**page_kwargs))
        original_close = context.close

        def close(*args, **close_kwargs):
            for open_page in context.pages:
                check_now(open_page)
            original_close(*args, **close_kwargs)

        context.close = close
        return context

    browser.new_context = new_context
    try:
        yield log
    finally:
        del browser.new_context
    assert log.checked_urls, "axe checked no page"
    assert not log.violations, "accessibility violations:\n" + log.summary()


@pytest.fixture(scope="session")
def browser_context_args(browser_context_args):
    return {**browser_context_args, "viewport": {"width": 1280, "height": 900},
            "accept_downloads": True}


HISTORIAN = "historian"
PASSWORD = "Archives-1887"
FILLER = ("Le secrétaire donne lecture du procès-verbal de la séance numéro {i}, qui est adopté "
          "sans observation. ")


@pytest.fixture
def historian(db):
    from django.contrib.auth import get_user_model

    return get_user_model().objects.create_user(username=HISTORIAN, password=PASSWORD)


@pytest.fixture
def long_archive(db):
    """The tiny archive's four documents, each inside forty routine sentences on either side.

    One chunk covers each whole document, as most of the demo archive's do, so the viewer has
    a long text in which only the evidence sentences may be highlighted.
    """
    import datetime as dt
    import hashlib
    import time

    from archive.models import Chunk, CorpusRevision, Document, SubCorpus
    from tests.conftest import TEXTS, indexes_in_step_with_the_database

    for slug, name, genre, external_id, day, text in TEXTS:
        sub_corpus, _ = SubCorpus.objects.get_or_create(
            slug=slug, defaults={"name": name, "genre": genre, "language": "fr"})
        before = "".join(FILLER.format(i=i) for i in range(40))
        after = "".join(FILLER.format(i=i) for i in range(40, 80))
        full = before + text + " " + after
        document = Document.objects.create(
            sub_corpus=sub_corpus, external_id=external_id, title=f"{name}, {day}",
            publication=name, date=dt.date.fromisoformat(day), date_precision="day", text=full,
            content_hash=hashlib.sha256(full.encode()).hexdigest())
        Chunk.objects.create(document=document, ordinal=0, text=full, char_start=0,
                             char_end=len(full), token_count=len(full.split()))
    CorpusRevision.objects.update_or_create(pk=1, defaults={"revision": time.time_ns()})
    indexes_in_step_with_the_database()


def log_in(page, base: str, username: str = HISTORIAN, password: str = PASSWORD) -> None:
    """Log in through the login form and land on the investigation list."""
    from playwright.sync_api import expect

    page.goto(f"{base}/accounts/login/?next=/investigations/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", password)
    page.click("form:has(input[name=username]) button[type=submit]")
    expect(page.get_by_role("heading", name="Investigations")).to_be_visible()


def ask(page, base: str, question: str) -> int:
    """Ask a question on the ask page and return the new investigation's id."""
    from playwright.sync_api import expect

    page.goto(f"{base}/investigations/new/")
    page.fill("textarea[name=question]", question)
    page.click("button:has-text('Investigate')")
    expect(page.locator("h1.question")).to_have_text(question)
    return int(page.url.rstrip("/").rsplit("/", 1)[1])
