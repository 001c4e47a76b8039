"""The historian downloads an investigation as one file and imports it where the same documents
live under other row ids; a tampered file is refused with its reason and nothing is written."""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import ask, log_in

pytestmark = [pytest.mark.browser, pytest.mark.worker, pytest.mark.django_db(transaction=True)]

QUESTION = "Que disent Le Gaulois et L'Intransigeant du discours de M. Lejeune sur les céréales ?"
NOTE = "À comparer avec <em>Le Temps</em> du lendemain."


def _ranked(page: Page) -> list[str]:
    return page.locator("#ranked article.source").evaluate_all(
        "nodes => nodes.map(n => n.dataset.document)")


def _documents_under_new_ids() -> None:
    """The other instance's archive: the same documents and chunks, other row ids."""
    from archive.models import Document

    for document in list(Document.objects.order_by("pk")):
        chunks = list(document.chunks.order_by("ordinal"))
        document.delete()
        document.pk = None
        document.save()
        for chunk in chunks:
            chunk.pk = None
            chunk.document = document
            chunk.save()


def test_an_investigation_moves_as_one_file(page: Page, live_server, historian, long_archive,
                                            celery_worker_process, tmp_path):
    from agent.models import Investigation

    base = live_server.url
    log_in(page, base)
    pk = ask(page, base, QUESTION)
    expect(page.get_by_test_id("status")).to_have_text("finished", timeout=90_000)
    page.goto(f"{base}/investigations/{pk}/review/")
    first = page.locator("#ranked article.source").first
    key = first.get_attribute("data-document")
    first.locator("form.note-form input[name=note]").fill(NOTE)
    first.locator("form.note-form button").click()
    expect(page.locator(f'#ranked article.source[data-document="{key}"] p.note')).to_contain_text(
        NOTE)
    ranked = _ranked(page)
    assert ranked

    with page.expect_download() as download_info:
        page.get_by_test_id("download-file").click()
    path = tmp_path / "moved.trace.json"
    download_info.value.save_as(path)
    assert json.loads(path.read_text())["payload"]["investigation"]["question"] == QUESTION

    _documents_under_new_ids()
    page.goto(f"{base}/investigations/")
    page.get_by_role("link", name="Import an investigation").click()

    tampered = tmp_path / "tampered.trace.json"
    tampered.write_text(path.read_text().replace(NOTE.replace("<", "\\u003c"), "Autre note")
                        .replace(NOTE, "Autre note"))
    assert tampered.read_text() != path.read_text()
    page.set_input_files("input[name=file]", str(tampered))
    page.get_by_role("button", name="Import").click()
    expect(page.locator("form[data-testid=import-form]")).to_contain_text(
        "checksum does not match")
    assert Investigation.objects.count() == 1

    page.set_input_files("input[name=file]", str(path))
    page.get_by_role("button", name="Import").click()
    expect(page.locator("h1.question")).to_have_text(QUESTION)
    expect(page.locator("ul.messages")).to_contain_text("Imported as investigation")
    imported = int(page.url.rstrip("/").split("/")[-2])
    assert imported != pk
    assert _ranked(page) == ranked
    moved = page.locator(f'#ranked article.source[data-document="{key}"]')
    expect(moved.locator("p.note")).to_contain_text(NOTE)  # escaped: shown as typed
    assert moved.locator("p.note em").count() == 0

    moved.locator("a.title").click()
    expect(page.locator("mark.evidence").first).to_be_visible()
    assert f"from={imported}" in page.url
