"""The viewer carries the Highwire citation tags Zotero's connector reads, read back here as
its "Embedded Metadata" translator reads them: the <meta name content> tags of the <head>."""

from __future__ import annotations

import datetime as dt
from html.parser import HTMLParser

import pytest

from archive.layout import DocumentLayout, LayoutBlock, LayoutPage
from archive.models import Document

pytestmark = pytest.mark.django_db

# The translator's one-to-one mappings (HIGHWIRE_MAPPINGS) of the tags the viewer writes.
HIGHWIRE = {"citation_title": "title", "citation_date": "date",
            "citation_journal_title": "publicationTitle", "citation_publisher": "publisher",
            "citation_abstract": "abstractNote", "citation_public_url": "url"}


class _HeadMeta(HTMLParser):
    """Collect the meta tags inside <head> (the translator's /html/head/meta), nothing else."""

    def __init__(self) -> None:
        super().__init__()
        self.in_head = False
        self.tags: list[tuple[str, str]] = []
        self.head_elements: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag == "head":
            self.in_head = True
        elif self.in_head:
            values = dict(attrs)
            self.head_elements.append(values.get("name") or tag)
            if tag == "meta" and values.get("name") and values.get("content"):
                self.tags.append((values["name"], values["content"]))

    def handle_endtag(self, tag):
        if tag == "head":
            self.in_head = False


def zotero_item(page: str) -> dict:
    """The item Zotero's Embedded Metadata translator makes of a page's Highwire tags."""
    parser = _HeadMeta()
    parser.feed(page)
    found: dict[str, str] = {}
    for name, content in parser.tags:
        found.setdefault(name, content)  # the translator reads the first of each name
    # A journal title makes a journal article; a title alone is guessed to be one too.
    item: dict = {"itemType": "journalArticle" if {"citation_journal_title", "citation_title"}
                  & set(found) else None}
    for name, field in HIGHWIRE.items():
        if found.get(name, "").strip():
            item[field] = " ".join(found[name].split())
    first, last = found.get("citation_firstpage", ""), found.get("citation_lastpage", "")
    if first.strip():
        item["pages"] = first.strip() + (f"-{last.strip()}" if last.strip() else "")
    item["tags"] = [t.strip() for t in found.get("citation_keywords", "").split(";") if t.strip()]
    item["head_elements"] = parser.head_elements
    return item


def _document(key: str) -> Document:
    slug, external_id = key.split(":", 1)
    return Document.objects.select_related("sub_corpus").get(sub_corpus__slug=slug,
                                                              external_id=external_id)


def _viewer(client, document: Document, query: str = "") -> str:
    response = client.get(f"/archive/documents/{document.pk}/{query}")
    assert response.status_code == 200
    return response.content.decode()


def test_a_scanned_press_page_is_saved_with_its_pages_url_and_passage(client, users,
                                                                       tiny_archive):
    document = _document("legaulois_1887_v1:18870226")
    turn = document.text.index("le droit")
    document.layout = DocumentLayout((
        LayoutPage(1, "p1.xml", 1000, 1400, "pixel", (LayoutBlock("a", 0, 0, 9, 9, 0, turn),)),
        LayoutPage(2, "p2.xml", 1000, 1400, "pixel",
                   (LayoutBlock("b", 0, 0, 9, 9, turn, len(document.text)),)),
    )).to_json()
    document.url = "https://gallica.bnf.fr/ark:/12148/bpt6k5245478"
    document.save()
    client.force_login(users["alice"])
    start, end = document.text.index("défend"), len(document.text)
    item = zotero_item(_viewer(client, document, f"?evidence={start}-{end}"))
    assert item["itemType"] == "journalArticle"
    assert item["title"] == document.title and item["publicationTitle"] == "Le Gaulois"
    assert item["date"] == "1887-02-26" and item["pages"] == "1-2"
    assert item["url"] == document.url
    assert item["abstractNote"] == " ".join(document.text[start:end].split())
    assert item["tags"] == ["Le Gaulois"]
    # A passage on the first page only cites that page.
    assert zotero_item(_viewer(client, document, f"?evidence={start}-{turn}"))["pages"] == "1"


def test_a_debate_without_an_address_cites_the_viewer_and_its_month(client, users,
                                                                     tiny_archive):
    document = _document("debats_1887:1887-02-25_100_000")
    Document.objects.filter(pk=document.pk).update(
        date=dt.date(1887, 2, 1), date_precision="month", page="col. 3",
        url="javascript:alert(1)")
    client.force_login(users["alice"])
    item = zotero_item(_viewer(client, document, "?evidence=0-10"))
    assert "publicationTitle" not in item and item["publisher"] == "Chambre des députés"
    assert item["date"] == "1887-02" and item["pages"] == "col. 3"
    assert item["url"] == f"http://testserver/archive/documents/{document.pk}/?evidence=0-10"


def test_hostile_metadata_stays_inside_its_attribute(client, users, tiny_archive):
    document = _document("lintransigeant_1887_v1:18870301")
    title = '"><script>alert(1)</script><meta name="citation_title" content="forged'
    Document.objects.filter(pk=document.pk).update(title=title, publication="L'Intran\n<b>")
    client.force_login(users["alice"])
    item = zotero_item(_viewer(client, document))
    assert item["title"] == title and item["publicationTitle"] == "L'Intran <b>"
    assert [name for name in item["head_elements"] if name == "citation_title"] == [
        "citation_title"], "no tag forged by the title"
    assert "abstractNote" not in item, "no passage highlighted, none saved"
