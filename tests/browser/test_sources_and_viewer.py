"""Evidence under each source, the viewer's highlight beside the citation, decisions and order
carried into all five citation formats."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from agent.models import Investigation
from archive.models import Document
from tests.browser.conftest import HISTORIAN, ask, log_in

pytestmark = [pytest.mark.browser, pytest.mark.worker, pytest.mark.django_db(transaction=True)]

SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
QUESTION = "Que disent Le Gaulois et L'Intransigeant du discours de M. Lejeune sur les céréales ?"
REASON = "Relu : le passage répond à la question"
NOTE = "À citer en premier, avec la date de la séance"


def _finished_review(page: Page, base: str) -> Investigation:
    pk = ask(page, base, QUESTION)
    expect(page.get_by_test_id("status")).to_have_text("finished", timeout=90_000)
    page.click("text=Review sources")
    expect(page.locator("h1.question")).to_have_text(QUESTION)
    return Investigation.objects.get(pk=pk)


def _within_viewport(page: Page, selector: str) -> dict:
    box = page.locator(selector).first.bounding_box()
    height = page.evaluate("window.innerHeight")
    assert box is not None, f"{selector} is not rendered"
    assert box["y"] >= 0 and box["y"] + box["height"] <= height, (
        f"{selector} spans {box['y']:.0f}–{box['y'] + box['height']:.0f} px, "
        f"outside the {height} px viewport")
    return box


def test_evidence_viewer_decisions_and_order_reach_every_export(
        page: Page, live_server, historian, long_archive, celery_worker_process):
    base = live_server.url
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    log_in(page, base)
    investigation = _finished_review(page, base)
    assert investigation.policy == "offline"

    # An evidence snippet under each accepted source, a few sentences, not the whole document.
    accepted = page.locator("#ranked article.source.state-accepted")
    assert accepted.count() >= 1
    lengths = {d.key: len(d.text) for d in Document.objects.all()}
    for index in range(accepted.count()):
        source = accepted.nth(index)
        quote = source.locator("blockquote.evidence p").inner_text().strip()
        assert quote, f"no evidence under {source.get_attribute('data-document')}"
        assert len(quote) < lengths[source.get_attribute("data-document")] / 4
    page.screenshot(path=SCREENSHOTS / "review.png", full_page=False)

    # The viewer: the evidence sentences highlighted inside the viewport, the citation too.
    first = accepted.first
    quote = " ".join(first.locator("blockquote.evidence p").inner_text().split())
    first.locator("a.title").click()
    mark = page.locator("mark.evidence#highlight")
    expect(mark).to_be_visible()
    page.wait_for_timeout(300)  # let the scroll to the highlight settle
    header = _within_viewport(page, "[data-testid=viewer-head]")
    citation = _within_viewport(page, "[data-testid=citation]")
    evidence = _within_viewport(page, "mark.evidence")
    assert evidence["y"] >= header["y"] + header["height"] - 1, "the header hides the evidence"
    assert citation["height"] > 0
    assert page.evaluate("window.scrollY") > 0, "the evidence lies deep in a long text"
    marked = " ".join(" ".join(page.locator("mark.evidence").all_inner_texts()).split())
    assert marked.rstrip("…") and quote.rstrip("…")[:60] in marked
    assert len(marked) <= 600, "only the evidence sentences are highlighted, not the chunk"
    expect(page.get_by_test_id("back-to-investigation")).to_have_attribute(
        "href", f"/investigations/{investigation.pk}/review/")
    page.screenshot(path=SCREENSHOTS / "viewer.png", full_page=False)
    page.get_by_test_id("back-to-investigation").click()

    # Decide: accept sources the agent did not, with a reason, until two are accepted.
    decided = None
    while page.locator("#ranked article.source").count() < 2:
        other = page.locator("article.source:not(.state-accepted)").first
        decided = other.get_attribute("data-document")
        other.locator("form.decide input[name=note]").fill(REASON)
        other.locator("form.decide button[value=accept]").click()
        expect(page.locator(f'#ranked article.source[data-document="{decided}"]')).to_have_count(1)
    if decided is None:  # the agent accepted two or more: hold, then accept, the second
        second = page.locator("#ranked article.source").nth(1)
        decided = second.get_attribute("data-document")
        second.locator("form.decide input[name=note]").fill(REASON)
        second.locator("form.decide button[value=hold]").click()
        again = page.locator(f'article.source[data-document="{decided}"]')
        again.locator("form.decide input[name=note]").fill(REASON)
        again.locator("form.decide button[value=accept]").click()
        expect(page.locator(f'#ranked article.source[data-document="{decided}"]')).to_have_count(1)
    decided_source = page.locator(f'article.source[data-document="{decided}"]')
    expect(decided_source.locator(".decision")).to_contain_text(HISTORIAN)
    decided_source.locator("form.note-form input[name=note]").fill(NOTE)
    decided_source.locator("form.note-form button").click()
    expect(page.locator(f'article.source[data-document="{decided}"] .note')).to_contain_text(NOTE)

    # Reorder: move the first accepted source one place down.
    before = page.locator("#ranked article.source").evaluate_all(
        "els => els.map(e => e.dataset.document)")
    page.locator("#ranked article.source").first.locator("button.move-down").click()
    expected = [before[1], before[0], *before[2:]]
    expect(page.locator("#ranked article.source").first).to_have_attribute(
        "data-document", expected[0])
    page.reload()
    order = page.locator("#ranked article.source").evaluate_all(
        "els => els.map(e => e.dataset.document)")
    assert order == expected

    downloads = {}
    for fmt in ("bibtex", "ris", "csl-json", "csv", "markdown"):
        with page.expect_download() as info:
            page.click(f'a[data-format="{fmt}"]')
        downloads[fmt] = Path(info.value.path()).read_text(encoding="utf-8-sig")
    titles = {d.key: d.title for d in Document.objects.all()}
    _assert_exports(downloads, order=order, decided=decided, titles=titles)


def _assert_exports(downloads: dict[str, str], *, order: list[str], decided: str,
                    titles: dict[str, str]) -> None:
    import bibtexparser
    import rispy

    def carries_decision(text: str, fmt: str) -> None:
        assert HISTORIAN in text, f"{fmt}: the historian is not named as decider"
        assert NOTE in text, f"{fmt}: the historian's note is missing"

    library = bibtexparser.parse_string(downloads["bibtex"])
    assert not library.failed_blocks
    bib_titles = [entry.fields_dict["title"].value.strip("{}") for entry in library.entries]
    assert bib_titles == [titles[key] for key in order], "bibtex does not follow the order"
    entry = library.entries[order.index(decided)]
    carries_decision(" ".join(str(f.value) for f in entry.fields), "bibtex")

    ris = rispy.loads(downloads["ris"])
    assert [item["id"] for item in ris] == order, "ris does not follow the order"
    carries_decision(json.dumps(ris[order.index(decided)], ensure_ascii=False), "ris")

    csl = json.loads(downloads["csl-json"])
    assert [item["id"] for item in csl] == order, "csl-json does not follow the order"
    carries_decision(json.dumps(csl[order.index(decided)], ensure_ascii=False), "csl-json")

    rows = list(csv.DictReader(io.StringIO(downloads["csv"])))
    assert [row["key"] for row in rows] == order, "csv does not follow the order"
    carries_decision(" ".join(rows[order.index(decided)].values()), "csv")

    markdown = downloads["markdown"]
    positions = [markdown.find(titles[key]) for key in order]
    assert all(p >= 0 for p in positions) and positions == sorted(positions), (
        "markdown does not follow the order")
    start = positions[order.index(decided)]
    following = [p for p in positions if p > start]
    carries_decision(markdown[start:min(following) if following else None], "markdown")
