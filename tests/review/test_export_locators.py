"""Citations name the pages their quote is printed on; a chosen subset of sources is exported."""

from __future__ import annotations

import csv
import io
import json

import bibtexparser
import pytest
import rispy

from agent.review import services as review_services
from agent.sources import reviewed_sources
from archive.layout import DocumentLayout, LayoutBlock, LayoutPage
from archive.models import Document

pytestmark = pytest.mark.django_db


def _document(key: str) -> Document:
    slug, external_id = key.split(":", 1)
    return Document.objects.get(sub_corpus__slug=slug, external_id=external_id)


def _two_pages(text: str, turn: int) -> dict:
    """A layout printing ``text`` on two pages, the second from character ``turn``."""
    def page(number: int, start: int, end: int) -> LayoutPage:
        return LayoutPage(number, f"p{number}.xml", 1000, 1400, "pixel",
                          (LayoutBlock(f"b{number}", 10, 10, 900, 100, start, end),))

    return DocumentLayout((page(1, 0, turn), page(2, turn, len(text)))).to_json()


@pytest.fixture
def paged(finished):
    """The first source is scanned over two pages, its quote straddling them; the second has a
    page number of its own and no layout."""
    first, second = finished.ranked_keys[:2]
    quote = next(r for r in reviewed_sources(finished) if r.document_key == first).evidence
    assert quote is not None and quote.end - quote.start > 2
    scanned = _document(first)
    scanned.layout = _two_pages(scanned.text, (quote.start + quote.end) // 2)
    scanned.save(update_fields=["layout"])
    Document.objects.filter(pk=_document(second).pk).update(page="12")
    return finished, first, second


def _get(client, investigation, fmt: str, query: str = "") -> str:
    response = client.get(f"/investigations/{investigation.pk}/export/{fmt}/{query}")
    assert response.status_code == 200, response.content[:300]
    return response.content.decode("utf-8-sig")


def test_every_format_names_the_pages_of_the_quote(client, users, paged):
    investigation, scanned, typed = paged
    client.force_login(users["alice"])
    bib = {entry["keywords"] + entry["addendum"]: entry
           for entry in bibtexparser.parse_string(_get(client, investigation, "bibtex")).entries}
    pages = {next(k for k in (scanned, typed) if k in text): entry.fields_dict.get("pages")
             for text, entry in bib.items()}
    assert {k: v.value if v else None for k, v in pages.items()} == {scanned: "1--2",
                                                                     typed: "12"}
    ris = {entry["id"]: entry for entry in rispy.loads(_get(client, investigation, "ris"))}
    assert (ris[scanned]["start_page"], ris[scanned]["end_page"]) == ("1", "2")
    assert ris[typed]["start_page"] == "12" and "end_page" not in ris[typed]
    csl = {record["id"]: record for record in json.loads(_get(client, investigation,
                                                              "csl-json"))}
    assert (csl[scanned]["page"], csl[typed]["page"]) == ("1-2", "12")
    rows = {row["key"]: row for row in csv.DictReader(io.StringIO(
        _get(client, investigation, "csv")))}
    assert (rows[scanned]["page"], rows[typed]["page"]) == ("1-2", "12")
    markdown = _get(client, investigation, "markdown")
    assert "p. 1-2" in markdown and "p. 12" in markdown


def test_a_quote_on_one_page_cites_that_page_only(client, users, paged):
    investigation, scanned, _ = paged
    document = _document(scanned)
    quote = next(r for r in reviewed_sources(investigation)
                 if r.document_key == scanned).evidence
    document.layout = _two_pages(document.text, quote.end + 1 if quote.end < len(
        document.text) else quote.start)
    document.save(update_fields=["layout"])
    client.force_login(users["alice"])
    rows = {row["key"]: row for row in csv.DictReader(io.StringIO(
        _get(client, investigation, "csv")))}
    assert rows[scanned]["page"] == ("1" if quote.end < len(document.text) else "2")


def test_a_chosen_subset_is_exported_in_the_order_in_force(client, users, paged):
    investigation, scanned, typed = paged
    client.force_login(users["alice"])
    for fmt in ("bibtex", "ris", "csl-json", "csv", "markdown"):
        body = _get(client, investigation, fmt, f"?selection=1&doc={typed}")
        assert typed in body and scanned not in body, fmt
    # A held source may be chosen too: it comes after the accepted ones, as on the review page.
    review_services.verdict_override(investigation=investigation, user=users["alice"],
                              document_key=scanned, decision="hold", note="")
    response = client.get(f"/investigations/{investigation.pk}/export/ris/"
                          f"?selection=1&doc={scanned}&doc={typed}")
    assert response.status_code == 200
    assert "selection" in response["Content-Disposition"]
    assert [entry["id"] for entry in rispy.loads(response.content.decode())] == [typed, scanned]
    assert [entry["id"] for entry in rispy.loads(_get(client, investigation, "ris"))] == [typed]
    review = client.get(f"/investigations/{investigation.pk}/review/").content.decode()
    assert 'id="export-selection"' in review
    assert f'name="doc" value="{typed}" form="export-selection" checked' in review
    assert f'name="doc" value="{scanned}" form="export-selection" aria-label' in review


@pytest.mark.parametrize("query", ["?selection=1", "?doc=nope:1", "?doc=%3Cb%3Ex:1",
                                   "?selection=1&doc=" + "&doc=".join(["a:1"] * 1001)])
def test_a_selection_of_nothing_or_of_unknown_sources_is_refused(client, users, paged, query):
    investigation, *_ = paged
    client.force_login(users["alice"])
    response = client.get(f"/investigations/{investigation.pk}/export/bibtex/{query}")
    assert response.status_code == 400
    assert response["Content-Type"].startswith("text/plain")


def test_a_rejected_source_cannot_be_selected(client, users, paged):
    investigation, scanned, _ = paged
    review_services.verdict_override(investigation=investigation, user=users["alice"],
                              document_key=scanned, decision="reject", note="")
    client.force_login(users["alice"])
    response = client.get(f"/investigations/{investigation.pk}/export/csv/?doc={scanned}")
    assert response.status_code == 400 and scanned.encode() in response.content
