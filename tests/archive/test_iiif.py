"""IIIF URLs: which are accepted at import, hostile ones refused with a clear message, and the
page regions the viewer asks for."""

from __future__ import annotations

import json
import re

import pytest
from django.test import Client
from django.urls import reverse

from archive.iiif import iiif_url_problem, image_origin, is_manifest, span_regions
from archive.layout import DocumentLayout, LayoutBlock, LayoutPage
from archive.models import Document
from archive.services import IngestRefused, ingest_file
from tests.archive import alto_samples as samples
from tests.archive.alto_samples import write
from tests.archive.conftest import shared_line

ACCEPTED = [
    "https://gallica.bnf.fr/iiif/ark:/12148/bpt6k5910346/f1",
    "http://iiif.example.org:8182/iiif/2/pj%2F0001.jp2",
    "https://iiif.example.org/ark1/manifest.json",
    "https://8.8.8.8/iiif/page1",
    "https://[2001:4860:4860::8888]/iiif/page1",
    "https://iiif.2020.example.org/page1",
    "https://1.example.org/page1",
    "http://[64:ff9b::808:808]/iiif",  # NAT64 of a public address
    "http://[2002:808:808::]/iiif",  # 6to4 of a public address
]

HOSTILE = [
    ("javascript:alert(document.cookie)", "must start with http:// or https:// (javascript:"),
    ("JavaScript:alert(1)//https://x.org/", "must start with http:// or https:// (javascript:"),
    ("data:image/svg+xml;base64,PHN2Zz4=", "must start with http:// or https:// (data:"),
    ("file:///etc/passwd", "must start with http:// or https:// (file:"),
    ("//iiif.example.org/page1", "(no scheme refused)"),
    ("http://localhost/iiif/page1", "points at localhost, this machine"),
    ("http://LOCALHOST.:8000/iiif", "points at localhost, this machine"),
    ("http://a.localhost/iiif", "points at a.localhost, this machine"),
    ("http://127.0.0.1:8000/iiif/page1", "points at 127.0.0.1, an internal address"),
    ("http://10.0.0.5/iiif/page1", "points at 10.0.0.5, an internal address"),
    ("http://192.168.1.1/iiif", "points at 192.168.1.1, an internal address"),
    ("http://172.16.0.1/iiif", "points at 172.16.0.1, an internal address"),
    ("http://169.254.169.254/latest/meta-data/", "points at 169.254.169.254, an internal"),
    ("http://0.0.0.0/iiif", "points at 0.0.0.0, an internal address"),
    ("http://[::1]/iiif", "points at ::1, an internal address"),
    ("http://[fe80::1]/iiif", "points at fe80::1, an internal address"),
    ("http://[::ffff:127.0.0.1]/iiif", "an internal address"),
    ("http://2130706433/iiif", "points at 2130706433, an internal address"),
    ("http://0x7f.1/iiif", "points at 0x7f.1, an internal address"),
    ("http://0177.0.0.1/iiif", "points at 0177.0.0.1, an internal address"),
    ("https://user:secret@iiif.example.org/p1", "must not carry a user name or password"),
    ('https://iiif.example.org/p1" onerror="alert(1)', "spaces, quotes or control characters"),
    ("https://iiif.example.org/p1\n", "spaces, quotes or control characters"),
    ("https://", "has no host"),
    ("https://exa_mple.org/p1", "is not a host name"),
    ("https://iiif.example.org/" + "a" * 500, "at most 500"),
    ("http://127.0.0.1.nip.io/iiif", "under a wildcard DNS service"),
    ("http://magic-127-0-0-1.sslip.io/iiif", "under a wildcard DNS service"),
    ("http://localtest.me/iiif", "under a wildcard DNS service"),
    ("http://a.lvh.me/iiif", "under a wildcard DNS service"),
    ("http://10-0-0-5.example.org/iiif", "spells the internal address 10.0.0.5"),
    ("http://169.254.169.254.example.org/iiif", "spells the internal address 169.254.169.254"),
    ("http://[::127.0.0.1]/iiif", "points at ::127.0.0.1, an internal address"),
    ("http://[64:ff9b::a9fe:a9fe]/iiif", "points at 64:ff9b::a9fe:a9fe, an internal address"),
    ("http://[2002:7f00:1::]/iiif", "points at 2002:7f00:1::, an internal address"),
    ("http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/iiif", "an internal address"),
]


@pytest.mark.parametrize("url", ACCEPTED)
def test_public_http_urls_are_accepted(url):
    assert iiif_url_problem(url) == ""


@pytest.mark.parametrize(("url", "message"), HOSTILE)
def test_hostile_urls_are_refused_with_a_clear_message(url, message):
    problem = iiif_url_problem(url)
    assert problem.startswith("IIIF URL") and message in problem, problem


def test_manifests_and_origins():
    assert is_manifest("https://x.org/iiif/ark1/manifest.json")
    assert is_manifest("https://x.org/iiif/ark1/manifest")
    assert not is_manifest("https://x.org/iiif/ark1/f1")
    assert image_origin("https://IIIF.example.org:8443/a/b") == "https://iiif.example.org:8443"
    assert image_origin("https://[2001:db8::1]/a") == "https://[2001:db8::1]"


def _page(number: int, unit: str, image: str, *blocks: LayoutBlock) -> LayoutPage:
    return LayoutPage(number, f"{number}.xml", 2000, 3000, unit, blocks, image)


def test_regions_are_the_box_of_the_range_blocks_on_each_page_with_an_image():
    layout = DocumentLayout((
        _page(1, "pixel", "https://iiif.example.org/p1/",
              LayoutBlock("A", 100, 200, 300, 50, 0, 10),
              LayoutBlock("B", 120, 260, 500, 100, 12, 40),
              LayoutBlock("C", 0, 0, 10, 10, 42, 50)),
        _page(2, "mm10", "https://iiif.example.org/p2",
              LayoutBlock("D", 500, 300, 1000, 600, 52, 80)),
        _page(3, "pixel", "", LayoutBlock("E", 1, 1, 1, 1, 82, 90)),
    ))
    assert [(r.page, r.url) for r in span_regions(layout, 5, 30)] == [
        (1, "https://iiif.example.org/p1/100,200,520,160/max/0/default.jpg")]
    # Another unit than pixels: percentages of the page; a page without an image: nothing.
    assert [(r.page, r.region) for r in span_regions(layout, 45, 88)] == [
        (1, "0,0,10,10"), (2, "pct:25,10,50,20")]
    # A manifest shows no region; a one-page document's own base stands for its page.
    one = DocumentLayout((_page(1, "pixel", "", LayoutBlock("A", 1, 2, 3, 4, 0, 10)),))
    assert span_regions(one, 0, 5, "https://x.org/m/manifest.json") == []
    assert span_regions(one, 0, 5, "https://x.org/i")[0].url == (
        "https://x.org/i/1,2,3,4/max/0/default.jpg")
    assert span_regions(one, 0, 5, "http://127.0.0.1/i") == []


@pytest.mark.django_db
def test_an_alto_csv_names_each_page_image_and_a_jsonl_line_its_document_image(
        tmp_path, write_jsonl):
    folder = tmp_path / "numerisation"
    write(folder, "p1.xml", samples.page_one())
    write(folder, "p2.xml", samples.page_two())
    csv_path = write(tmp_path, "meta.csv", (
        "filename,issue,page,iiif\n"
        "p1.xml,pj,1,https://iiif.example.org/pj/f1\n"
        "p2.xml,pj,2,https://iiif.example.org/pj/f2\n"))
    ingest_file(path=folder, fmt="alto", metadata_csv=csv_path, embed=False)
    issue = Document.objects.get()
    assert [p.image for p in issue.document_layout().pages] == [
        "https://iiif.example.org/pj/f1", "https://iiif.example.org/pj/f2"]
    line = json.loads(shared_line("1", "Le conseil s'est réuni."))
    path = write_jsonl([json.dumps({**line, "iiif": " https://iiif.example.org/g/manifest "})])
    ingest_file(path=path, embed=False)
    assert Document.objects.get(external_id="1").iiif_url == (
        "https://iiif.example.org/g/manifest")


@pytest.mark.django_db
def test_a_mets_iiif_file_group_names_the_image_of_each_page(tmp_path):
    folder = tmp_path / "petit_journal_1887"
    write(folder, "alto/0001.xml", samples.page_one())
    write(folder, "alto/0002.xml", samples.page_two())
    mets = write(folder, "18870226_mets.xml", samples.mets_xml(
        objid="bpt6k5910346", title="Le Petit Journal", date="1887-02-26",
        files=[("ALTO1", "alto/0001.xml"), ("ALTO2", "alto/0002.xml")], order=["ALTO1", "ALTO2"],
        iiif={"ALTO1": "https://iiif.example.org/pj/f1/info.json",
              "ALTO2": "https://iiif.example.org/pj/f2"}))
    ingest_file(path=folder, fmt="alto", embed=False)
    assert [p.image for p in Document.objects.get().document_layout().pages] == [
        "https://iiif.example.org/pj/f1", "https://iiif.example.org/pj/f2"]
    Document.objects.all().delete()
    mets.write_text(mets.read_text().replace("https://iiif.example.org/pj/f2",
                                             "http://169.254.169.254/pj/f2"))
    line = samples.line_of(mets.read_text(), "169.254.169.254")
    with pytest.raises(IngestRefused, match=re.escape(
            f"line {line}: 18870226_mets.xml: image of alto/0002.xml: IIIF URL points at "
            "169.254.169.254, an internal address")):
        ingest_file(path=folder, fmt="alto", embed=False)
    assert not Document.objects.exists()


@pytest.mark.django_db
@pytest.mark.parametrize(("url", "message"), HOSTILE[:3] + HOSTILE[8:10] + HOSTILE[12:13])
def test_a_hostile_iiif_url_refuses_the_import_with_its_line(tmp_path, write_jsonl, url, message):
    line = json.loads(shared_line("1", "Texte."))
    path = write_jsonl([shared_line("0", "Bon."), json.dumps({**line, "iiif": url})])
    with pytest.raises(IngestRefused, match=r"line 2: IIIF URL .*" + re.escape(message)):
        ingest_file(path=path, embed=False)
    folder = tmp_path / "scans"
    write(folder, "p1.xml", samples.page_one())
    csv_path = write(tmp_path, "meta.csv", f"filename,iiif\np1.xml,{json.dumps(url)}\n")
    with pytest.raises(IngestRefused, match=r"line 2: p1.xml \(CSV line 2\): IIIF URL"):
        ingest_file(path=folder, fmt="alto", metadata_csv=csv_path, embed=False)
    assert not Document.objects.exists()


@pytest.mark.django_db
def test_the_viewer_shows_the_region_and_lets_the_page_load_only_that_host(tmp_path, client):
    from django.contrib.auth import get_user_model

    folder = tmp_path / "scans"
    write(folder, "p1.xml", samples.page_one())
    csv_path = write(tmp_path, "meta.csv", "filename,iiif\np1.xml,https://iiif.example.org/pj\n")
    ingest_file(path=folder, fmt="alto", metadata_csv=csv_path, embed=False)
    document = Document.objects.get()
    start = document.text.index("Le conseil")
    user = get_user_model().objects.create_user("reader", password="pw-Archives-1887")
    browser = Client()
    browser.force_login(user)
    url = reverse("document_detail", args=[document.pk])
    response = browser.get(f"{url}?evidence={start}-{start + 30}")
    html = response.content.decode()
    # The leader block (TB2) holds the range: its box, in pixels.
    assert 'src="https://iiif.example.org/pj/120,320,1150,900/max/0/default.jpg"' in html
    csp = response.headers["Content-Security-Policy"]
    assert re.search(r"img-src 'self' data: https://iiif\.example\.org(;|$)", csp), csp
    plain = browser.get(url)
    assert "page-region" not in plain.content.decode()
    assert "img-src 'self' data:;" in plain.headers["Content-Security-Policy"]
