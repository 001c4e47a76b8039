"""The viewer shades each word of a scanned page by the confidence its OCR gave it (ALTO WC)."""

from __future__ import annotations

import re

import pytest

from archive.models import Document
from tests.browser.test_scans_and_timeline import _petit_journal

pytestmark = pytest.mark.django_db

SHADED = re.compile(r'<span class="(ocr-\w+)" data-confidence="([\d.]+)">([^<]*)</span>')


def test_words_are_shaded_by_their_band_inside_and_outside_the_evidence(
        client, users, tmp_path):
    document = _petit_journal(tmp_path)
    client.force_login(users["alice"])
    start = document.text.index("Le conseil")
    end = document.text.index("sous la")
    page = client.get(f"/archive/documents/{document.pk}/?evidence={start}-{end}"
                      ).content.decode()
    assert 'data-testid="ocr-legend"' in page and 'data-testid="cite-confidence"' in page
    text = page[page.index('<div class="doc-text"'):]
    shaded = [(band, float(confidence), word) for band, confidence, word in SHADED.findall(text)]
    # The sample's words rated under 0.8, by hand (alto_samples: LEADER and page two):
    # l'Élysée 0.41, exposé 0.52, "Chambre" 0.7 (its parts "Cham" 0.6 and "bre" 0.8 joined),
    # éclaté 0.41; "Boulanger" joins 0.9 and 0.7 at 0.8, not under it.
    assert shaded == [("ocr-low", 0.41, "l&#x27;Élysée"), ("ocr-mid", 0.52, "exposé"),
                      ("ocr-mid", 0.70, "Chambre"), ("ocr-low", 0.41, "éclaté")]
    evidence = text[text.index('<mark class="evidence"'):text.index("</mark>")]
    assert '<span class="ocr-low" data-confidence="0.41">l&#x27;Élysée</span>' in evidence


def test_a_typed_document_has_no_shading_and_no_legend(client, users, tiny_archive):
    document = Document.objects.get(external_id="18870226")
    client.force_login(users["alice"])
    page = client.get(f"/archive/documents/{document.pk}/").content.decode()
    assert 'data-testid="ocr-legend"' not in page and not SHADED.search(page)
