"""Held and rejected sources ranked by relevance, filtered and paged; a source moved to any rank."""

from __future__ import annotations

import hashlib
import re

import pytest

from agent.engine.events import RankingMade, SearchRan
from agent.models import Investigation, Step, Verdict
from agent.review.lists import PAGE_SIZE
from agent.sources import moved_to, order_in_force
from archive.models import Document, SubCorpus


def test_moved_to_places_a_source_at_any_rank_in_one_step():
    keys = ["a", "b", "c", "d", "e"]
    assert moved_to(keys, "e", 1) == ["e", "a", "b", "c", "d"]
    assert moved_to(keys, "a", 3) == ["b", "c", "a", "d", "e"]
    assert moved_to(keys, "b", 99) == ["a", "c", "d", "e", "b"]
    assert moved_to(keys, "c", 0) == ["c", "a", "b", "d", "e"]
    with pytest.raises(ValueError):
        moved_to(keys, "z", 1)


@pytest.fixture
def crowded(users):
    """A run of alice's that left 45 held and 3 rejected documents, found by two searches."""
    sub_corpus = SubCorpus.objects.create(slug="gaulois", name="Le Gaulois", genre="press")
    investigation = Investigation.objects.create(owner=users["alice"], question="Les céréales ?",
                                                 status="finished")
    keys = []
    for i in range(48):
        text = f"Séance {i}: le droit sur les céréales" + (" et la disette" if i % 5 == 0 else "")
        document = Document.objects.create(
            sub_corpus=sub_corpus, external_id=f"n{i:02d}", title=f"Le Gaulois, numéro {i:02d}",
            text=text, content_hash=hashlib.sha256(text.encode()).hexdigest())
        keys.append(document.key)
        Verdict.objects.create(investigation=investigation, document_key=document.key,
                               sub_corpus="gaulois", chunk_id=None, sub_question_index=0,
                               decision="reject" if i >= 45 else "hold",
                               rationale=f"Parle des céréales{' et de la disette' * (i % 5 == 0)}",
                               evidence_text=text)
    # Searches found the documents in reverse order; the agent ranked three held ones itself.
    events = [SearchRan(channel="bm25", query="céréales",
                        document_keys=tuple(reversed(keys))).stamped(1, 0),
              SearchRan(channel="dense", query="céréales",
                        document_keys=tuple(keys[:10])).stamped(2, 0),
              RankingMade(groups=(), ranked=(), held_documents=(keys[7], keys[3], keys[30])
                          ).stamped(3, None)]
    Step.objects.bulk_create([Step.from_event(investigation, event) for event in events])
    return investigation, keys


def _held_keys(html: str) -> list[str]:
    held = html[html.index('id="held"'):html.index('id="rejected"')]
    return re.findall(r'<article class="source state-held" data-document="([^"]+)"', held)


def test_held_sources_come_ranked_by_relevance_a_page_at_a_time(client, users, crowded):
    investigation, keys = crowded
    client.force_login(users["alice"])
    html = client.get(f"/investigations/{investigation.pk}/review/").content.decode()
    first = _held_keys(html)
    assert len(first) == PAGE_SIZE
    # The agent's own order first, then the best position in any search (the dense search put
    # n00 first, the BM25 one n44 fourth), then the number of searches that found it (n04 and
    # n43 both came fifth, n04 in both searches).
    assert first[:3] == [keys[7], keys[3], keys[30]]
    assert first[3:9] == [keys[0], keys[1], keys[2], keys[44], keys[4], keys[43]]
    assert "Held <span class=\"muted\">(45)" in html and "1–20 of 45" in html
    assert "page 1 of 3" in html

    last = client.get(f"/investigations/{investigation.pk}/review/?held_page=3")
    last_keys = _held_keys(last.content.decode())
    assert len(last_keys) == 45 - 2 * PAGE_SIZE and not set(last_keys) & set(first)
    past = client.get(f"/investigations/{investigation.pk}/review/?held_page=9").content.decode()
    assert _held_keys(past) == last_keys  # past the end: the last page
    assert client.get(f"/investigations/{investigation.pk}/review/?held_page=x").status_code == 400


def test_the_filter_keeps_the_sources_holding_every_word(client, users, crowded):
    investigation, keys = crowded
    client.force_login(users["alice"])
    html = client.get(f"/investigations/{investigation.pk}/review/?filter=DISETTE"
                      ).content.decode()
    shown = _held_keys(html)
    assert set(shown) == {keys[i] for i in range(0, 45, 5)}
    assert "9 matching (of 45)" in html
    assert '<details class="rejected" id="rejected" open>' in html
    none = client.get(f"/investigations/{investigation.pk}/review/?filter=betteraves"
                      ).content.decode()
    assert _held_keys(none) == [] and "No held source matches" in none


def test_a_source_accepted_late_moves_to_the_top_in_one_action(client, users, finished):
    client.force_login(users["alice"])
    keys = order_in_force(finished).keys
    held = finished.verdicts.exclude(document_key__in=keys).first()
    client.post(f"/investigations/{finished.pk}/override/",
                {"document": held.document_key, "decision": "accept"})
    assert order_in_force(finished).keys[-1] == held.document_key  # it lands last
    response = client.post(f"/investigations/{finished.pk}/order/",
                           {"document": held.document_key, "direction": "to", "rank": "1"})
    assert response.status_code == 302
    assert order_in_force(finished).keys == [held.document_key, *keys]
    bad = client.post(f"/investigations/{finished.pk}/order/",
                      {"document": held.document_key, "direction": "to", "rank": "-2"})
    assert bad.status_code == 400


def test_a_decision_on_page_two_of_a_filtered_list_comes_back_there(client, users, crowded):
    investigation, keys = crowded
    client.force_login(users["alice"])
    page = client.get(f"/investigations/{investigation.pk}/review/?filter=c%C3%A9r%C3%A9ales"
                      "&held_page=2").content.decode()
    assert 'name="lists" value="filter=c%C3%A9r%C3%A9ales&amp;held_page=2"' in page
    response = client.post(f"/investigations/{investigation.pk}/override/",
                           {"document": keys[12], "decision": "reject",
                            "lists": "filter=c%C3%A9r%C3%A9ales&held_page=2&next=//evil"})
    assert response["Location"] == (f"/investigations/{investigation.pk}/review/"
                                    "?filter=c%C3%A9r%C3%A9ales&held_page=2#sources")

    noted = client.post(f"/investigations/{investigation.pk}/note/",
                        {"document": keys[12], "note": "À relire",
                         "lists": "filter=c%C3%A9r%C3%A9ales&held_page=2"})
    assert noted["Location"] == response["Location"]
