"""The historian corrects a passage's OCR in the viewer: the correction is marked, the OCR's text
one click away, and from then on the passage is searched and quoted as corrected."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import HISTORIAN, ask, log_in

pytestmark = [pytest.mark.browser, pytest.mark.worker, pytest.mark.django_db(transaction=True)]

QUESTION = "Que disent Le Gaulois et L'Intransigeant du discours de M. Lejeune sur les céréales ?"
OCR = "M. Lejeune défend la protection"
FIXED = "M. Lejeune défend vigoureusement la protection"


def test_a_corrected_passage_is_searched_and_quoted_as_corrected(
        page: Page, live_server, historian, long_archive, celery_worker_process):
    from archive.models import Chunk, ChunkCorrection

    base = live_server.url
    chunk = Chunk.objects.select_related("document").get(
        document__sub_corpus__slug="legaulois_1887_v1")
    log_in(page, base)
    page.goto(f"{base}/archive/documents/{chunk.document_id}/?chunk={chunk.pk}")
    form = page.get_by_test_id("correct-form")
    textarea = form.locator("textarea[name=text]")
    ocr_text = textarea.input_value()
    assert OCR in ocr_text

    textarea.fill("<b>x</b>" * 12_500)  # 100,000 characters of markup: refused, nothing kept
    form.get_by_role("button", name="Save the correction").click()
    expect(page.get_by_test_id("correction-error")).to_contain_text("100,000 characters")
    assert not ChunkCorrection.objects.exists()

    page.goto(f"{base}/archive/documents/{chunk.document_id}/?chunk={chunk.pk}")
    form = page.get_by_test_id("correct-form")
    form.locator("textarea[name=text]").fill(ocr_text.replace(OCR, FIXED) + " <i>sic</i>")
    form.get_by_role("button", name="Save the correction").click()
    expect(page.locator("ul.messages")).to_contain_text("Your correction of chunk 0 is kept")
    corrected = page.locator(f"#chunk-{chunk.pk}.chunk-corrected")
    expect(corrected).to_contain_text(FIXED)
    expect(corrected).to_contain_text("<i>sic</i>")  # shown as typed, never as markup
    assert corrected.locator("i").count() == 0
    expect(corrected.locator(".chunk-label")).to_have_text("chunk 0 · corrected")
    record = page.get_by_test_id("correction")
    expect(record).to_contain_text(f"corrected by {HISTORIAN}")
    original = record.get_by_test_id("ocr-original")
    original.locator("summary").click()
    expect(original).to_contain_text(OCR)

    page.goto(f"{base}/search/?q=vigoureusement&channel=bm25")
    hit = page.locator(".search-hit").first
    expect(hit).to_contain_text("Le Gaulois")
    expect(hit.locator(".snippet mark")).to_contain_text("vigoureusement")

    pk = ask(page, base, QUESTION)
    expect(page.get_by_test_id("status")).to_have_text("finished", timeout=90_000)
    page.goto(f"{base}/investigations/{pk}/review/")
    source = page.locator('#ranked article.source[data-document="legaulois_1887_v1:18870226"]')
    expect(source.locator("blockquote.evidence p")).to_contain_text("vigoureusement")
    source.locator("a.title").click()
    expect(page.locator("mark.evidence").first).to_be_visible()
    marked = " ".join(" ".join(page.locator("mark.evidence").all_inner_texts()).split())
    assert "défend vigoureusement la protection" in marked
