"""The historian picks or adjusts a source's quote in the viewer; the agent's quote is kept."""

from __future__ import annotations

import json
from html import unescape

from django.urls import reverse

from agent.models import EvidencePick
from agent.sources import reviewed_sources
from archive.highlight import Span
from archive.models import Document
from archive.quote_moves import quote_moves

TEXT = "Première phrase. Deuxième phrase ici. Troisième phrase là. Quatrième enfin."


def test_the_quote_moves_a_sentence_at_a_time():
    second = Span(17, 37)
    assert TEXT[second.start:second.end] == "Deuxième phrase ici."
    moves = quote_moves(TEXT, second)
    assert TEXT[moves.earlier.start:moves.earlier.end] == "Première phrase."
    assert TEXT[moves.later.start:moves.later.end] == "Troisième phrase là."
    assert TEXT[moves.add_after.start:moves.add_after.end] == (
        "Deuxième phrase ici. Troisième phrase là.")
    assert moves.drop_first is None and moves.drop_last is None  # one sentence: nothing to drop
    two = quote_moves(TEXT, moves.add_after)
    assert TEXT[two.drop_first.start:two.drop_first.end] == "Troisième phrase là."
    assert quote_moves(TEXT, Span(0, 16)).earlier is None


def _document(key: str) -> Document:
    slug, external_id = key.split(":", 1)
    return Document.objects.get(sub_corpus__slug=slug, external_id=external_id)


def test_a_picked_quote_heads_the_source_and_the_agents_is_kept(client, users, finished):
    key = finished.ranked_keys[0]
    document = _document(key)
    agent_quote = next(r for r in reviewed_sources(finished) if r.document_key == key).evidence
    client.force_login(users["alice"])
    start = document.text.index("M. Lejeune")
    end = len(document.text.rstrip())
    viewer = client.get(f"/archive/documents/{document.pk}/?from={finished.pk}"
                        f"&evidence={start}-{end}").content.decode()
    assert 'data-testid="quote-picker"' in viewer
    assert f"/investigations/{finished.pk}/quote/" in viewer

    response = client.post(f"/investigations/{finished.pk}/quote/",
                           {"document": key, "start": start, "end": end})
    assert response.status_code == 302
    row = next(r for r in reviewed_sources(finished) if r.document_key == key)
    assert row.evidence.origin == "historian" and row.evidence.by == "alice"
    assert row.evidence.text == " ".join(document.text[start:end].split())
    assert row.agent_evidence == agent_quote
    review = client.get(f"/investigations/{finished.pk}/review/").content.decode()
    assert "Quote picked by alice" in review and "The agent's quote" in review
    trace = json.loads(client.get(f"/investigations/{finished.pk}/export/trace-json/").content)
    shown = json.dumps(trace, ensure_ascii=False)
    assert row.evidence.text in shown and agent_quote.text in shown
    markdown = client.get(f"/investigations/{finished.pk}/export/markdown/").content.decode()
    assert "Quote picked by the historian" in unescape(markdown)


def test_a_quote_outside_the_document_or_of_another_user_is_refused(client, users, finished):
    key = finished.ranked_keys[0]
    length = len(_document(key).text)
    client.force_login(users["alice"])
    assert client.post(f"/investigations/{finished.pk}/quote/",
                       {"document": key, "start": 0, "end": length + 5}).status_code == 400
    assert client.post(f"/investigations/{finished.pk}/quote/",
                       {"document": key, "start": "x", "end": 4}).status_code == 400
    client.force_login(users["bob"])
    assert client.post(f"/investigations/{finished.pk}/quote/",
                       {"document": key, "start": 0, "end": 4}).status_code == 404
    assert not EvidencePick.objects.exists()


def test_a_document_that_is_none_of_the_sources_is_refused_alike_when_opened_or_quoted(
        client, users, finished):
    outside = Document.objects.exclude(
        external_id__in=[key.split(":", 1)[1] for key in finished.ranked_keys]).first()
    key = f"{outside.sub_corpus.slug}:{outside.external_id}"
    assert not finished.verdicts.filter(document_key=key).exists()
    client.force_login(users["alice"])
    opened = client.get(reverse("open_source", args=[finished.pk]), {"doc": key})
    quoted = client.post(f"/investigations/{finished.pk}/quote/",
                         {"document": key, "start": 0, "end": 4})
    for response in (opened, quoted):
        assert response.status_code == 400
        assert b"This document has no verdict in this investigation." in response.content
    inside = finished.verdicts.values_list("document_key", flat=True).first()
    assert client.get(reverse("open_source", args=[finished.pk]),
                      {"doc": inside}).status_code == 302
    assert not EvidencePick.objects.exists()
