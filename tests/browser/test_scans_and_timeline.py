"""Scanned sources in the browser: an ALTO-imported document's evidence shown on its page image
(IIIF region) or as text when the image fails; the review page's timeline linked to the
sources; the OCR confidence filtered on the search page, shown on the review page, exported."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest
from PIL import Image, ImageDraw, ImageFont
from playwright.sync_api import Page, Route, expect

from archive.models import Document
from archive.services import ingest_file
from tests.archive import alto_samples as samples
from tests.archive.alto_samples import write
from tests.browser.conftest import ask, log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
IIIF = "https://iiif.example.org/iiif"
QUESTION = "Que disent Le Gaulois et L'Intransigeant du discours de M. Lejeune sur les céréales ?"


# The leader block of the sample's page 1 (alto_samples.LEADER), line by line as printed.
LEADER_LINES = [
    "Paris, 25 février.",
    "Le conseil des ministres s'est réuni hier à l'Élysée sous la",
    "présidence de M. Grévy. Le ministre de la Guerre, le général Boulan-",
    "ger a exposé ses projets.",
    "La Cham-",
    "bre discutera lundi le budget.",
]


def _scan(lines: list[str], size: tuple[int, int]) -> bytes:
    """A JPEG standing for the scanned region: the block's lines, printed."""
    image = Image.new("RGB", size, (236, 228, 207))
    draw = ImageDraw.Draw(image)
    try:
        font: ImageFont.FreeTypeFont | ImageFont.ImageFont = ImageFont.truetype(
            "/usr/share/fonts/truetype/dejavu/DejaVuSerif.ttf", 31)
    except OSError:
        font = ImageFont.load_default(size=31)
    for number, line in enumerate(lines):
        draw.text((30, 70 + number * 135), line, fill=(40, 34, 30), font=font)
    buffer = io.BytesIO()
    image.save(buffer, format="JPEG", quality=70)
    return buffer.getvalue()


def _petit_journal(root: Path) -> Document:
    folder = root / "petit_journal"
    write(folder, "pj_0001.xml", samples.page_one())
    write(folder, "pj_0002.xml", samples.page_two())
    csv_path = write(root, "pages.csv", (
        "filename,issue,page,date,publication,sub_corpus,iiif\n"
        f"pj_0001.xml,pj-18870226,1,1887-02-26,Le Petit Journal,petit_journal,{IIIF}/pj-f1\n"
        f"pj_0002.xml,pj-18870226,2,1887-02-26,Le Petit Journal,petit_journal,{IIIF}/pj-f2\n"))
    ingest_file(path=folder, fmt="alto", metadata_csv=csv_path, embed=False)
    return Document.objects.get(external_id="pj-18870226")


def test_alto_evidence_shows_its_page_region_and_the_text_when_the_image_fails(
        page: Page, live_server, historian, tmp_path):
    base = live_server.url
    document = _petit_journal(tmp_path)
    jpeg = _scan(LEADER_LINES, (1150, 900))
    requested: list[str] = []

    def serve(route: Route) -> None:
        requested.append(route.request.url)
        route.fulfill(status=200, content_type="image/jpeg", body=jpeg)

    page.route(f"{IIIF}/**", serve)
    log_in(page, base)
    start = document.text.index("Le conseil des ministres")
    end = document.text.index("hier à l'Élysée") + len("hier à l'Élysée")
    page.goto(f"{base}/archive/documents/{document.pk}/?evidence={start}-{end}")

    # The evidence lies in the leader block (TB2) of page 1: its box, in pixels.
    image = page.get_by_test_id("page-region-image")
    expect(image).to_be_visible()
    page.wait_for_function("img => img.complete && img.naturalWidth === 1150",
                           arg=image.element_handle())
    assert requested == [f"{IIIF}/pj-f1/120,320,1150,900/max/0/default.jpg"]
    expect(page.locator("mark.evidence#highlight")).to_contain_text("Le conseil des ministres")
    expect(page.get_by_test_id("page-regions")).to_contain_text("Page 1 as scanned")
    # Each word is shaded by its OCR confidence, under a legend naming the bands.
    expect(page.get_by_test_id("ocr-legend")).to_be_visible()
    expect(page.locator("mark.evidence .ocr-low")).to_have_text("l'Élysée")
    assert page.locator(".doc-text .ocr-mid").all_inner_texts() == ["exposé", "Chambre"]
    page.set_viewport_size({"width": 1000, "height": 760})
    page.evaluate("window.scrollTo(0, 0)")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=SCREENSHOTS / "alto-region.png", full_page=False)

    # A span across both pages: one region per page, each from its own image.
    requested.clear()
    start = document.text.index("lundi le budget")
    end = document.text.index("Un incendie") + len("Un incendie")
    page.goto(f"{base}/archive/documents/{document.pk}/?evidence={start}-{end}")
    expect(page.get_by_test_id("page-region-image")).to_have_count(2)
    page.wait_for_function("() => [...document.querySelectorAll('[data-iiif-region] img')]"
                           ".every(img => img.complete && img.naturalWidth > 0)")
    assert sorted(requested) == [f"{IIIF}/pj-f1/120,320,1150,900/max/0/default.jpg",
                                 f"{IIIF}/pj-f2/120,140,1150,700/max/0/default.jpg"]

    # The image server is unreachable: the region goes, the highlighted text stays.
    page.unroute(f"{IIIF}/**")
    page.route(f"{IIIF}/**", lambda route: route.abort("connectionrefused"))
    page.goto(f"{base}/archive/documents/{document.pk}/?evidence={start}-{end}")
    expect(page.get_by_test_id("page-regions")).to_be_hidden()
    expect(page.locator("mark.evidence#highlight")).to_be_visible()
    expect(page.locator("mark.evidence").first).to_contain_text("lundi le budget")


@pytest.mark.worker
def test_review_timeline_links_each_source_and_the_ocr_confidence_filters_and_exports(
        page: Page, live_server, historian, long_archive, celery_worker_process):
    base = live_server.url
    gaulois = Document.objects.get(sub_corpus__slug="legaulois_1887_v1")
    Document.objects.filter(pk=gaulois.pk).update(ocr_confidence=0.62)
    log_in(page, base)
    ask(page, base, QUESTION)
    expect(page.get_by_test_id("status")).to_have_text("finished", timeout=90_000)
    page.click("text=Review sources")

    # Hold an accepted source other than Le Gaulois, so the timeline shows both states.
    others = page.locator(f'#ranked article.source:not([data-document="{gaulois.key}"])')
    expect(page.locator(f'#ranked article.source[data-document="{gaulois.key}"]')).to_have_count(1)
    assert others.count() >= 1, "the tiny archive gives two accepted sources or more"
    held_key = others.last.get_attribute("data-document")
    others.last.locator("form.decide button[value=hold]").click()
    expect(page.locator(f'article.source.state-held[data-document="{held_key}"]')).to_have_count(1)

    timeline = page.get_by_test_id("timeline")
    expect(timeline).to_be_visible()
    shown = {a.get_attribute("data-document"): a.get_attribute("data-state")
             for a in timeline.locator("area").all()}
    states = {s.get_attribute("data-document"): s.get_attribute("class").split()[-1]
              for s in page.locator("article.source.state-accepted, article.source.state-held")
              .all()}
    assert shown == {key: state.removeprefix("state-") for key, state in states.items()}
    assert shown[held_key] == "held"
    timeline.screenshot(path=SCREENSHOTS / "timeline.png")

    # Clicking a marker (where matplotlib drew it) opens that source, evidence highlighted.
    image = timeline.get_by_test_id("timeline-image")
    box = image.bounding_box()
    area = timeline.locator(f'area[data-document="{gaulois.key}"]')
    x, y, _ = (int(v) for v in area.get_attribute("coords").split(","))
    page.mouse.click(box["x"] + x, box["y"] + y)
    expect(page.get_by_test_id("citation")).to_contain_text(gaulois.key)
    expect(page.locator("mark.evidence#highlight")).to_be_visible()
    expect(page.get_by_test_id("ocr-confidence")).to_contain_text("62 %")
    page.get_by_test_id("back-to-investigation").click()

    # The confidence on the review page and in the CSV export (the held source accepted again).
    page.locator(f'article.source[data-document="{held_key}"] form.decide button[value=accept]'
                 ).click()
    expect(page.locator(f'#ranked article.source[data-document="{held_key}"]')).to_have_count(1)
    source = page.locator(f'article.source[data-document="{gaulois.key}"]')
    expect(source.get_by_test_id("source-confidence")).to_have_text("OCR 62 %")
    with page.expect_download() as info:
        page.click('a[data-format="csv"]')
    rows = {row["key"]: row for row in csv.DictReader(io.StringIO(
        Path(info.value.path()).read_text(encoding="utf-8-sig")))}
    assert rows[gaulois.key]["ocr_confidence"] == "0.620"
    assert rows[held_key]["ocr_confidence"] == ""
    # A chosen subset: every accepted source is ticked; untick one and export the rest.
    page.locator(f'article.source[data-document="{held_key}"] input[form=export-selection]'
                 ).uncheck()
    with page.expect_download() as info:
        page.get_by_test_id("export-selection").locator('button[data-format="csv"]').click()
    chosen = [row["key"] for row in csv.DictReader(io.StringIO(
        Path(info.value.path()).read_text(encoding="utf-8-sig")))]
    assert gaulois.key in chosen and held_key not in chosen
    assert len(chosen) == len(rows) - 1

    # The search page: a floor above it leaves Le Gaulois out, unrated documents stay unless
    # left out too.
    page.goto(f"{base}/search/")
    page.fill("input[name=q]", "Lejeune céréales")
    page.select_option("select[name=channel]", "bm25")
    page.click("button:has-text('Search')")
    results = page.locator("ol.search-results")
    expect(results).to_contain_text(gaulois.key)
    expect(results.get_by_test_id("hit-confidence")).to_have_text("OCR 62 %")
    page.fill("input[name=min_confidence]", "80")
    page.click("button:has-text('Search')")
    expect(results).not_to_contain_text(gaulois.key)
    expect(results).to_contain_text("lintransigeant_1887_v1:18870227")
    page.select_option("select[name=unrated]", "drop")
    page.click("button:has-text('Search')")
    expect(page.locator("#search-results")).to_contain_text("No documents found.")
    page.fill("input[name=min_confidence]", "60")
    page.click("button:has-text('Search')")
    expect(results).to_contain_text(gaulois.key)
    assert results.locator("li.search-hit").count() == 1
