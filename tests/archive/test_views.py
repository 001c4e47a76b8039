"""Browse pages: sub-corpora, documents by date, the escaped and highlighted document viewer."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from archive.models import Document
from archive.selectors import document_by_key
from archive.services import ingest_file
from tests.archive.conftest import shared_line

pytestmark = pytest.mark.django_db

OCR = "Première phrase du texte. <script>alert('x')</script> & la suite. Dernière phrase ici."


@pytest.fixture
def archive(write_jsonl):
    lines = [shared_line("18870226", OCR),
             shared_line("18870301", "Un autre jour.", date="1887-03-01"),
             shared_line("1887-01-11_003_000", "PRÉSIDENCE\n\nLa séance est ouverte.",
                         collection="debats_1887", source="Journal officiel",
                         date="1887-01-11")]
    ingest_file(path=write_jsonl(lines))


@pytest.fixture
def user_client(client):
    user = get_user_model().objects.create_user("historienne", password="pw-for-tests-only")
    client.force_login(user)
    return client


@pytest.mark.parametrize("name,args", [
    ("archive_home", []), ("sub_corpus_detail", ["legaulois_1887_v1"]), ("document_detail", [1]),
])
def test_browse_pages_require_login(client, name, args):
    response = client.get(reverse(name, args=args))
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]


def test_home_lists_sub_corpora_with_genre_counts_and_dates(archive, user_client):
    html = user_client.get(reverse("archive_home")).content.decode()
    assert "Le Gaulois" in html and "Chambre des députés, débats (Journal officiel)" in html
    assert "parliamentary debates" in html
    assert "1887-02-26 – 1887-03-01" in html


def test_sub_corpus_page_lists_documents_by_date_and_filters(archive, user_client):
    url = reverse("sub_corpus_detail", args=["legaulois_1887_v1"])
    html = user_client.get(url).content.decode()
    assert html.index("26 février 1887") < html.index("1er mars 1887")
    filtered = user_client.get(url, {"from": "1887-02-28"}).content.decode()
    assert "1er mars 1887" in filtered and "26 février 1887" not in filtered
    assert user_client.get(reverse("sub_corpus_detail", args=["nope"])).status_code == 404


def test_document_viewer_escapes_ocr_text_and_highlights_a_span(archive, user_client):
    doc = Document.objects.get(external_id="18870226")
    start = OCR.index("<script>")
    end = start + len("<script>alert('x')</script>")
    html = user_client.get(
        reverse("document_detail", args=[doc.pk]), {"start": start, "end": end}
    ).content.decode()
    assert "<script>alert" not in html
    assert ('<mark class="evidence" id="highlight">&lt;script&gt;alert(&#x27;x&#x27;)'
            "&lt;/script&gt;</mark>") in html
    assert "&amp; la suite" in html
    assert "legaulois_1887_v1:18870226" in html


def test_document_viewer_marks_chunks_and_highlights_a_chunk(archive, user_client):
    doc = Document.objects.get(external_id="1887-01-11_003_000")
    chunk = doc.chunks.get()
    html = user_client.get(
        reverse("document_detail", args=[doc.pk]), {"chunk": chunk.pk}
    ).content.decode()
    assert f'id="chunk-{chunk.pk}"' in html and "chunk-selected" in html
    # The chunk is only marked; the highlight is for evidence sentences.
    assert '<mark class="evidence"' not in html
    evidence = user_client.get(
        reverse("document_detail", args=[doc.pk]), {"evidence": "0-10"}
    ).content.decode()
    assert '<mark class="evidence" id="highlight">PRÉSIDENCE' in evidence
    assert "séance 3, section 0" in html


def test_document_by_key_finds_collection_and_external_id(archive):
    doc = document_by_key("debats_1887:1887-01-11_003_000")
    assert doc is not None and doc.sub_corpus.genre == "debates"
    assert document_by_key("debats_1887:missing") is None
    assert document_by_key("no-colon") is None


def test_a_sub_corpus_stored_under_a_name_that_is_not_a_slug_stays_browsable(user_client):
    from archive.models import SubCorpus

    SubCorpus.objects.create(slug="Le Temps 1887", name="Le Temps", genre="press")
    assert user_client.get(reverse("archive_home")).status_code == 200
    page = user_client.get(reverse("sub_corpus_detail", args=["Le Temps 1887"]))
    assert page.status_code == 200 and "Le Temps" in page.content.decode()
