"""A historian's OCR correction: a new row beside the original, searched and quoted from then on,
offsets into the document unchanged; too long or empty corrections refused, markup escaped."""

from __future__ import annotations

import hashlib
import re
import time
from html import unescape

import pytest

from archive import services
from archive.corrections import OffsetMap, corrected_slice
from archive.models import Chunk, ChunkCorrection, Document, SubCorpus
from archive.selectors import corrected_text, ocr_offsets
from common.search import SearchRequest
from retrieval.search import search
from tests.conftest import indexes_in_step_with_the_database

FIRST = "Première phrase du compte rendu, sans erreur. "
SECOND = "Deuxième phrase : le général Boulangcr parle aux électeurs. "
THIRD = "Troisième phrase, le ministre répond."
CORRECTED = "Deuxième phrase : le général Boulanger parle longuement aux électeurs. "


def test_offsets_map_both_ways():
    offsets = OffsetMap(SECOND, CORRECTED)
    start = SECOND.index("le général")
    assert offsets.to_corrected(start) == CORRECTED.index("le général")
    end = SECOND.index("aux électeurs") + len("aux électeurs")
    assert CORRECTED[offsets.to_corrected(start):offsets.to_corrected(end)] == (
        "le général Boulanger parle longuement aux électeurs")
    assert offsets.to_original(CORRECTED.index("aux")) == SECOND.index("aux")
    assert offsets.to_corrected(len(SECOND)) == len(CORRECTED)
    assert offsets.to_original(0) == 0


def test_a_long_repetitive_passage_aligns_on_its_words():
    minutes = "".join(f"Le secrétaire donne lecture du procès-verbal de la séance numéro {i}, "
                      "qui est adopté sans observation. " for i in range(80))
    corrected = minutes.replace("procès-verbal", "proces verbal").replace("numéro 3,", "n° 3,")
    offsets = OffsetMap(minutes, corrected)
    for number in (2, 40, 79):
        start = minutes.index(f"numéro {number},")
        end = start + len(f"numéro {number}")
        assert corrected[offsets.to_corrected(start):offsets.to_corrected(end)] == (
            f"numéro {number}")
        assert offsets.to_original(offsets.to_corrected(start)) == start
    # A replaced stretch maps proportionally: the range lands on the replacement, give or take
    # the unchanged frequent words around it.
    start = minutes.index("numéro 3,")
    mapped = corrected[offsets.to_corrected(start):offsets.to_corrected(start + 9)]
    assert "n° 3" in mapped and len(mapped) < 20


def _document() -> Document:
    sub_corpus, _ = SubCorpus.objects.get_or_create(slug="lecho_1887", defaults={
        "name": "L'Écho", "genre": "press"})
    text = FIRST + SECOND + THIRD
    document = Document.objects.create(
        sub_corpus=sub_corpus, external_id="18870310", title="L'Écho, 10 mars 1887", text=text,
        content_hash=hashlib.sha256(text.encode()).hexdigest())
    cursor = 0
    for ordinal, part in enumerate((FIRST, SECOND, THIRD)):
        Chunk.objects.create(document=document, ordinal=ordinal, text=part, char_start=cursor,
                             char_end=cursor + len(part), token_count=len(part.split()),
                             content_hash=hashlib.sha256(part.encode()).hexdigest())
        cursor += len(part)
    return document


def _bm25_chunks(query: str) -> set[int]:
    return {hit.chunk_id for hit in search(SearchRequest(channel="bm25", query=query, limit=20))}


@pytest.mark.django_db(transaction=True)
def test_a_correction_is_a_new_row_searched_and_embedded_from_then_on(
        users, celery_worker_process):
    document = _document()
    indexes_in_step_with_the_database()
    chunk = document.chunks.get(ordinal=1)
    assert chunk.pk in _bm25_chunks("Boulangcr")
    assert chunk.pk not in _bm25_chunks("Boulanger")

    correction = services.chunk_correct(chunk=chunk, user=users["alice"], text=CORRECTED)

    chunk.refresh_from_db()
    assert chunk.text == CORRECTED.strip()
    assert correction.original_text == SECOND and correction.user == users["alice"]
    assert correction.created_at is not None
    document.refresh_from_db()
    assert document.text == FIRST + SECOND + THIRD  # the OCR, and every offset into it, stays
    assert (chunk.char_start, chunk.char_end) == (len(FIRST), len(FIRST) + len(SECOND))
    # The outbox carried the change to the BM25 index after the commit.
    assert chunk.pk in _bm25_chunks("Boulanger")
    assert chunk.pk not in _bm25_chunks("Boulangcr")
    assert chunk.pk in {hit.chunk_id for hit in search(SearchRequest(
        channel="substring", query="longuement", limit=20))}
    # ... and the worker embedded the corrected text.
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        chunk.refresh_from_db()
        if chunk.embedding is not None:
            break
        time.sleep(0.5)
    assert chunk.embedding is not None and chunk.embedding_model == "hash"
    assert chunk.content_hash == hashlib.sha256(CORRECTED.strip().encode()).hexdigest()

    again = services.chunk_correct(chunk=chunk, user=users["bob"], text=CORRECTED + " Fin.")
    assert again.original_text == CORRECTED.strip()  # the text it replaced
    assert ChunkCorrection.objects.filter(chunk=chunk).count() == 2


@pytest.mark.django_db
@pytest.mark.parametrize(("text", "reason"), [
    ("x" * 100_000, "100,000 characters"),
    ("   ", "empty"),
    ("une\x00erreur", "NUL"),
])
def test_a_bad_correction_is_refused_and_nothing_changes(users, text, reason):
    document = _document()
    chunk = document.chunks.get(ordinal=1)
    with pytest.raises(services.CorrectionError, match=reason):
        services.chunk_correct(chunk=chunk, user=users["alice"], text=text)
    chunk.refresh_from_db()
    assert chunk.text == SECOND and not ChunkCorrection.objects.exists()


def _marked(page: str) -> str:
    return " ".join(unescape(re.sub(r"<[^>]+>", "", " ".join(
        re.findall(r'<mark class="evidence"[^>]*>(.*?)</mark>', page, re.S)))).split())


@pytest.mark.django_db
def test_the_viewer_shows_the_correction_marked_the_ocr_beside_and_old_offsets_hold(
        client, users):
    document = _document()
    chunk = document.chunks.get(ordinal=1)
    # A verdict's evidence from before the correction: OCR offsets of "le général ... électeurs."
    start = document.text.index("le général")
    end = document.text.index("électeurs.") + len("électeurs.")
    client.force_login(users["alice"])
    before = client.get(f"/archive/documents/{document.pk}/?evidence={start}-{end}")
    assert _marked(before.content.decode()) == "le général Boulangcr parle aux électeurs."

    hostile = CORRECTED + "<script>alert(1)</script>"
    response = client.post(f"/archive/chunks/{chunk.pk}/correct/", {"text": hostile})
    assert response.status_code == 302

    page = client.get(f"/archive/documents/{document.pk}/?evidence={start}-{end}")
    html = page.content.decode()
    assert "<script>alert(1)</script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert 'class="chunk chunk-selected chunk-corrected"' in html
    assert "chunk 1 · corrected" in html
    assert _marked(html) == "le général Boulanger parle longuement aux électeurs."
    corrections = html[html.index('data-testid="ocr-corrections"'):]
    assert "corrected by alice" in corrections
    assert "Boulangcr" in corrections  # the OCR's text, one click away
    assert corrected_text(document, start, end) == (
        "le général Boulanger parle longuement aux électeurs.")
    assert corrected_slice(document.text, [], {}, start, end) == document.text[start:end]


@pytest.mark.django_db
def test_a_refused_correction_is_a_400_with_the_reason(client, users):
    document = _document()
    chunk = document.chunks.get(ordinal=1)
    client.force_login(users["alice"])
    response = client.post(f"/archive/chunks/{chunk.pk}/correct/", {"text": "x" * 100_000})
    assert response.status_code == 400
    assert "100,000 characters" in response.content.decode()
    assert not ChunkCorrection.objects.exists()
    assert client.get(f"/archive/chunks/{chunk.pk}/correct/").status_code == 405


@pytest.mark.django_db
def test_evidence_found_in_corrected_text_is_stored_in_ocr_offsets(users):
    document = _document()
    chunk = document.chunks.get(ordinal=1)
    services.chunk_correct(chunk=chunk, user=users["alice"], text=CORRECTED)
    quote = "le général Boulanger parle longuement"
    local = CORRECTED.index(quote)
    start, end = ocr_offsets(chunk.pk, chunk.char_start + local,
                             chunk.char_start + local + len(quote), quote)
    assert document.text[start:end] == "le général Boulangcr parle"
    untouched = document.chunks.get(ordinal=0)
    assert ocr_offsets(untouched.pk, 0, 8, "Première") == (0, 8)
