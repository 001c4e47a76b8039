"""The search page: login required, results per document, escaped snippets, HTMX partial."""

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from retrieval.services import snippet
from tests.retrieval.conftest import axis_vector, bump_revision

pytestmark = pytest.mark.django_db


@pytest.fixture
def user_client(client):
    user = get_user_model().objects.create_user("historian", password="pw-for-tests")
    client.force_login(user)
    return client


@pytest.fixture
def docs(archive, day):
    evil = archive.document("gaulois", ["Boulanger <script>alert('x')</script> à Longchamp"],
                            date=day(7, 14), vectors=[axis_vector(1)], title="Revue")
    other = archive.document("debats", ["M.Floquet a la parole sur Boulanger."], date=day(7, 16),
                             vectors=[axis_vector(0, 1)])
    bump_revision()
    return evil, other


def test_search_page_requires_login(client):
    response = client.get(reverse("search"))
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]


def test_search_escapes_chunk_text_and_links_to_the_document_viewer(user_client, docs):
    evil, _ = docs
    response = user_client.get(reverse("search"), {"q": "Boulanger", "channel": "bm25"})
    html = response.content.decode()
    assert response.status_code == 200
    assert "<script>alert" not in html
    assert "&lt;script&gt;alert" in html
    chunk = evil.chunks.get()
    assert f"{reverse('document_detail', args=[evil.pk])}?chunk={chunk.pk}" in html
    assert "bm25 #" in html


def test_hybrid_search_with_sub_corpus_and_date_filters(user_client, docs, day):
    _, debate = docs
    response = user_client.get(reverse("search"), {
        "q": "Boulanger axis1", "channel": "hybrid", "sub_corpus": ["debats"],
        "date_from": "1887-07-15", "date_to": "1887-07-20"})
    html = response.content.decode()
    assert debate.key in html and "gaulois:" not in html
    assert "parliamentary debates" in html or "Debats" in html


def test_htmx_request_gets_only_the_results_partial(user_client, docs):
    response = user_client.get(reverse("search"), {"q": "Boulanger", "channel": "substring"},
                               HTTP_HX_REQUEST="true")
    html = response.content.decode()
    assert "<html" not in html and "search-hit" in html


def test_temporal_search_needs_a_date(user_client, docs):
    response = user_client.get(reverse("search"), {"channel": "temporal"})
    assert "needs a date" in response.content.decode()
    ok = user_client.get(reverse("search"), {"channel": "temporal", "date_from": "1887-07-16"})
    assert "debats:" in ok.content.decode()


def test_snippet_centres_on_the_first_query_word_ignoring_accents():
    before, match, after = snippet("Long texte. La Chambre des députés vote.", "deputes")
    assert match == "députés" and before.endswith("des ") and after == " vote."


@pytest.mark.parametrize("channel", ["bm25", "substring", "hybrid", "dense"])
def test_the_ocr_confidence_filter_keeps_unrated_documents_unless_asked(
        user_client, archive, day, channel):
    from archive.models import Document

    sure = archive.document("gaulois", ["Boulanger passe la revue à Longchamp."],
                            date=day(7, 14), vectors=[axis_vector(1)])
    doubtful = archive.document("gaulois", ["Boulanger salue la foule à Longchamp."],
                                date=day(7, 15), vectors=[axis_vector(1, 1)])
    typed = archive.document("debats", ["M. Floquet répond à Boulanger à Longchamp."],
                             date=day(7, 16), vectors=[axis_vector(1, 0, 1)])
    Document.objects.filter(pk=sure.pk).update(ocr_confidence=0.91)
    Document.objects.filter(pk=doubtful.pk).update(ocr_confidence=0.62)
    bump_revision()

    def found(**filters) -> set[str]:
        html = user_client.get(reverse("search"), {
            "q": "Boulanger Longchamp axis1", "channel": channel, **filters}).content.decode()
        return {d.key for d in (sure, doubtful, typed) if d.key in html}

    everything = {sure.key, doubtful.key, typed.key}
    assert found() == everything
    assert found(min_confidence="80") == {sure.key, typed.key}
    assert found(min_confidence="80", unrated="drop") == {sure.key}
    assert found(unrated="drop") == {sure.key, doubtful.key}
    assert found(min_confidence="50", unrated="keep") == everything
    html = user_client.get(reverse("search"), {"q": "Boulanger", "channel": channel,
                                               "min_confidence": "80"}).content.decode()
    assert "OCR 91 %" in html
    bad = user_client.get(reverse("search"), {"q": "Boulanger", "min_confidence": "101"})
    assert "Min. OCR confidence" in bad.content.decode() and sure.key not in bad.content.decode()


def test_snippet_marks_the_densest_run_of_query_words_as_whole_words():
    text = ("Le ministre descend de la tribune. " * 6
            + "On écoute le discours de M. Lejeune sur les céréales, très applaudi. "
            + "Fin de la séance. " * 12)
    before, match, after = snippet(text, "Que dit le discours de M. Lejeune sur les céréales ?",
                                   width=160)
    assert match == "discours de M. Lejeune sur les céréales"
    assert abs(len(before) - len(after)) <= 3  # centred on what matched
    # "des" is no query word of its own, and never matches inside "descend".
    _, match, _ = snippet(text, "des céréales", width=160)
    assert match == "céréales"
    _, match, _ = snippet("Le tarif des blés. Les céréales montent.", "céréale", width=80)
    assert match == "céréales"  # a plural "s" ignored
