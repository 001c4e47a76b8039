"""Exports carry the historian's decisions, notes and order; the review page reorders sources."""

from __future__ import annotations

import csv
import io
import json
import re

import pytest
from django.urls import reverse

from agent.models import SourceOrder, Verdict
from agent.review import services as review_services
from agent.sources import opening_sentences

QUESTION = "Que disent Le Gaulois et L'Intransigeant du discours de M. Lejeune sur les céréales ?"
OFFSET = re.compile(r"[+-]\d\d:\d\d$")
REASON = "Le seul compte rendu qui cite le discours"
NOTE = "À relire : « bloc enfariné »"


@pytest.fixture
def finished(finished):
    assert len(finished.ranked_keys) >= 2, "the tiny archive gives at least two sources"
    return finished


@pytest.fixture
def reviewed(finished, users):
    """The historian confirms the agent's last source with a reason, notes the first one, and
    puts the last source first."""
    alice = users["alice"]
    first, last = finished.ranked_keys[0], finished.ranked_keys[-1]
    review_services.verdict_override(investigation=finished, user=alice, document_key=last,
                              decision="accept", note=REASON)
    review_services.note_add(investigation=finished, user=alice, document_key=first, note=NOTE)
    order = [last, *finished.ranked_keys[:-1]]
    review_services.sources_reorder(investigation=finished, user=alice, document_keys=order)
    return finished, order


def _get(client, investigation, fmt) -> tuple[str, bytes]:
    response = client.get(f"/investigations/{investigation.pk}/export/{fmt}/")
    assert response.status_code == 200, response.content[:300]
    assert "attachment" in response["Content-Disposition"]
    return response.content.decode("utf-8"), response.content


def test_bibtex_carries_decider_note_rationale_and_order(client, users, reviewed):
    import bibtexparser

    investigation, order = reviewed
    client.force_login(users["alice"])
    library = bibtexparser.parse_string(_get(client, investigation, "bibtex")[0])
    assert not library.failed_blocks
    entries = library.entries
    assert [e.fields_dict["addendum"].value.split("TRACE source ")[-1] for e in entries] == order
    top = entries[0].fields_dict
    noted = entries[order.index(investigation.ranked_keys[0])].fields_dict
    assert "Decided by alice (historian)" in top["addendum"].value
    assert re.search(r"UTC[+-]\d\d:\d\d", top["addendum"].value)
    assert top["annote"].value == REASON
    assert "Decided by the agent" in noted["addendum"].value
    assert noted["note"].value.startswith(NOTE + " (alice, ")
    assert noted["annote"].value == NOTE, "the historian's note is the decisive rationale"


def test_ris_carries_decider_note_rationale_and_order(client, users, reviewed):
    import rispy

    investigation, order = reviewed
    client.force_login(users["alice"])
    records = rispy.loads(_get(client, investigation, "ris")[0])
    assert [r["id"] for r in records] == order
    top = records[0]
    assert top["custom1"] == "alice" and OFFSET.search(top["custom2"])
    assert any(n.startswith("Decided by alice (historian), ") for n in top["notes"])
    assert f"Why (historian): {REASON}" in top["notes"]
    noted = next(r for r in records if r["id"] == investigation.ranked_keys[0])
    assert noted["custom1"] == "the agent" and "custom2" not in noted
    assert any(n.startswith(f"Note: {NOTE} (alice, ") for n in noted["notes"])


def test_csl_json_carries_decider_note_rationale_and_order(client, users, reviewed):
    from citeproc import (
        Citation,
        CitationItem,
        CitationStylesBibliography,
        CitationStylesStyle,
        formatter,
    )
    from citeproc.source.json import CiteProcJSON

    investigation, order = reviewed
    client.force_login(users["alice"])
    records = json.loads(_get(client, investigation, "csl-json")[0])
    assert [r["id"] for r in records] == order
    top = records[0]
    assert top["custom"]["decided_by"] == "historian" and top["custom"]["decider"] == "alice"
    assert OFFSET.search(top["custom"]["decided_at"]) and top["annote"] == REASON
    assert top["custom"]["agent_rationale"], "the agent's rationale is kept beside the historian's"
    noted = next(r for r in records if r["id"] == investigation.ranked_keys[0])
    assert noted["note"].startswith(NOTE) and noted["custom"]["decided_by"] == "agent"
    with pytest.warns(UserWarning, match="custom"):  # citeproc-py skips fields it does not use
        source = CiteProcJSON(records)
    style = CitationStylesStyle("harvard-cite-them-right", validate=False)
    bibliography = CitationStylesBibliography(style, source, formatter.plain)
    bibliography.register(Citation([CitationItem(r["id"]) for r in records]))
    assert len(bibliography.bibliography()) == len(order)


def test_csv_starts_with_a_bom_and_carries_decider_note_and_order(client, users, reviewed):
    investigation, order = reviewed
    client.force_login(users["alice"])
    text, raw = _get(client, investigation, "csv")
    assert raw.startswith(b"\xef\xbb\xbf")
    rows = list(csv.DictReader(io.StringIO(raw.decode("utf-8-sig"))))
    assert [row["key"] for row in rows] == order
    assert [int(row["rank"]) for row in rows] == list(range(1, len(order) + 1))
    top = rows[0]
    assert (top["decided_by"], top["decider"], top["rationale"]) == ("historian", "alice", REASON)
    assert OFFSET.search(top["decided_at"]) and top["agent_rationale"]
    noted = next(row for row in rows if row["key"] == investigation.ranked_keys[0])
    assert noted["notes"] == NOTE and noted["notes_by"].startswith("alice, ")
    assert noted["decided_by"] == "agent" and noted["decided_at"] == ""


def test_markdown_renders_decider_note_and_order(client, users, reviewed):
    from markdown_it import MarkdownIt

    investigation, order = reviewed
    client.force_login(users["alice"])
    text = _get(client, investigation, "markdown")[0]
    tokens = MarkdownIt("commonmark").parse(text)
    heading = tokens[1]
    assert tokens[0].tag == "h1" and heading.content.count("\n") == 0
    assert "".join(c.content for c in heading.children) == f"Sources: {QUESTION}"
    items = [i for i, t in enumerate(tokens) if t.type == "list_item_open" and t.level == 1]
    assert len(items) == len(order)
    codes = [next(c.content for c in tokens[i + 2].children if c.type == "code_inline")
             for i in items]
    assert codes == order
    quotes = [t for t in tokens if t.type == "blockquote_open"]
    assert len(quotes) == len(order), "each source quotes its evidence as a real block quote"
    assert not any(t.type.startswith("html") for t in tokens)
    assert "Decided by alice (historian), " in text and NOTE in text
    when = r"\d{4}-\d\d-\d\d \d\d:\d\d \w+ \(UTC[+-]\d\d:\d\d\)"
    assert re.search("Order set by alice, " + when, text)


def test_the_trace_follows_the_order_and_keeps_both_rationales(client, users, reviewed):
    investigation, order = reviewed
    client.force_login(users["alice"])
    trace = json.loads(_get(client, investigation, "trace-json")[0])
    assert trace["ranked_ids"] == order and trace["agent_ranked_ids"] == investigation.ranked_keys
    assert trace["order"]["set_by"] == "alice" and OFFSET.search(trace["order"]["set_at"])
    top = trace["sources"][0]
    assert top["document_key"] == order[0] and top["rank"] == 1
    assert top["rationale"] == REASON and top["historian_reason"] == REASON
    assert top["agent_rationale"] and top["decided_by"] == "historian"
    assert OFFSET.search(trace["created_at"]) and trace["time_zone"]
    assert [o["document_keys"] for o in trace["source_orders"]] == [order]


def test_without_a_historian_the_agent_decides_and_its_ranking_holds(client, users, finished):
    client.force_login(users["alice"])
    rows = list(csv.DictReader(io.StringIO(_get(client, finished, "csv")[1].decode("utf-8-sig"))))
    assert [row["key"] for row in rows] == finished.ranked_keys
    assert {row["decided_by"] for row in rows} == {"agent"}
    assert all(row["rationale"] == row["agent_rationale"] != "" for row in rows)


def test_exports_quote_the_verdicts_evidence_span(client, users, finished):
    from archive.models import Document

    key = finished.ranked_keys[0]
    document = next(d for d in Document.objects.all() if d.key == key)
    start = document.text.index("Lejeune")
    end = start + len("Lejeune") + 10
    Verdict.objects.filter(investigation=finished, document_key=key, decision="accept").update(
        evidence_start=start, evidence_end=end, evidence_text=document.text[start:end])
    # Verdicts recorded without a span fall back to the chunk's opening sentences.
    Verdict.objects.filter(investigation=finished).exclude(document_key=key).update(
        evidence_start=None, evidence_end=None, evidence_text="")
    client.force_login(users["alice"])
    rows = {row["key"]: row for row in
            csv.DictReader(io.StringIO(_get(client, finished, "csv")[1].decode("utf-8-sig")))}
    quoted = rows[key]
    assert (quoted["quote"], quoted["quote_start"], quoted["quote_end"]) == (
        document.text[start:end], str(start), str(end))
    assert quoted["quote_origin"] == "verdict"
    for other in finished.ranked_keys[1:]:
        row = rows[other]
        text = next(d for d in Document.objects.all() if d.key == other).text
        assert row["quote_origin"] == "chunk"
        assert text[int(row["quote_start"]):int(row["quote_end"])] == row["quote"]


def test_the_fallback_quote_takes_whole_sentences_and_cuts_at_a_word():
    text = "  Première phrase. Deuxième phrase ! Troisième ? Quatrième phrase."
    evidence = opening_sentences(text, offset=100)
    assert evidence.text == "Première phrase. Deuxième phrase ! Troisième ?"
    assert (evidence.start, evidence.end) == (102, 100 + text.index("Quatrième") - 1)
    long = "mot " * 150 + "fin."
    cut = opening_sentences(long, limit=50)
    assert cut.text.endswith("mot…") and len(cut.text) <= 51
    assert long[cut.start:cut.end] == cut.text[:-1]
    one = "Une phrase de quarante caractères environ. " + "x" * 500
    assert opening_sentences(one).text == "Une phrase de quarante caractères environ."


def test_the_review_page_shows_the_evidence_and_the_decider(client, users, reviewed):
    investigation, order = reviewed
    client.force_login(users["alice"])
    page = client.get(f"/investigations/{investigation.pk}/review/").content.decode()
    assert page.count('<blockquote class="evidence"') >= len(order)
    assert "Decided by alice, <time datetime=" in page and REASON in page
    ranked = page.split('id="ranked"')[1].split("<h2>Held")[0]
    positions = [ranked.index(f'data-document="{key}"') for key in order]
    assert positions == sorted(positions), "the page shows the order in force"
    assert "Order set by alice" in ranked


def test_moving_a_source_records_a_new_order_and_never_overwrites(client, users, finished):
    client.force_login(users["alice"])
    url = f"/investigations/{finished.pk}/order/"
    agent_order = list(finished.ranked_keys)
    second = agent_order[1]

    response = client.post(url, {"document": second, "direction": "up"})
    assert response.status_code == 302 and "moved=" in response["Location"]
    moved = [second, agent_order[0], *agent_order[2:]]
    assert list(SourceOrder.objects.filter(investigation=finished)
                .values_list("document_keys", flat=True)) == [moved]

    client.post(url, {"document": second, "direction": "up"})  # already first: no new event
    assert SourceOrder.objects.filter(investigation=finished).count() == 1

    page = client.post(url, {"document": second, "direction": "down"},
                       headers={"HX-Request": "true"}, follow=True).content.decode()
    assert SourceOrder.objects.filter(investigation=finished).count() == 2
    assert 'id="ranked"' in page
    focused = re.search(r'<button[^>]*autofocus[^>]*>', page).group(0)
    assert 'value="down"' in focused or 'value="up"' in focused
    rows = list(csv.DictReader(io.StringIO(_get(client, finished, "csv")[1].decode("utf-8-sig"))))
    assert [row["key"] for row in rows] == agent_order


def test_a_reorder_names_only_sources_of_this_investigation(client, users, finished):
    client.force_login(users["alice"])
    url = f"/investigations/{finished.pk}/order/"
    assert client.post(url, {"document": "nowhere:1", "direction": "up"}).status_code == 400
    assert client.post(url, {"order": ["nowhere:1"]}).status_code == 400
    key = finished.ranked_keys[0]
    assert client.post(url, {"order": [key, key]}).status_code == 400
    assert not SourceOrder.objects.exists()
    client.force_login(users["eve"])
    assert client.post(url, {"document": key, "direction": "down"}).status_code == 404


def test_a_source_the_historian_accepts_later_joins_the_end_of_their_order(users, finished):
    from agent.sources import reviewed_sources

    alice = users["alice"]
    order = list(reversed(finished.ranked_keys))
    review_services.sources_reorder(investigation=finished, user=alice, document_keys=order)
    outsider = next(v.document_key for v in finished.verdicts.all()
                    if v.document_key not in finished.ranked_keys)
    review_services.verdict_override(investigation=finished, user=alice, document_key=outsider,
                              decision="accept")
    accepted = [s.document_key for s in reviewed_sources(finished) if s.state == "accepted"]
    assert accepted == [*order, outsider]


def test_the_ocr_confidence_is_a_csv_column_and_a_badge_on_the_review_page(
        client, users, finished):
    from archive.models import Document

    scanned, typed = finished.ranked_keys[:2]
    document = next(d for d in Document.objects.all() if d.key == scanned)
    Document.objects.filter(pk=document.pk).update(ocr_confidence=0.8734)
    client.force_login(users["alice"])
    rows = {row["key"]: row for row in
            csv.DictReader(io.StringIO(_get(client, finished, "csv")[1].decode("utf-8-sig")))}
    assert (rows[scanned]["ocr_confidence"], rows[typed]["ocr_confidence"]) == ("0.873", "")
    page = client.get(reverse("investigation_review", args=[finished.pk])).content.decode()
    badges = re.findall(r'data-document="([^"]+)".*?(?:data-testid="source-confidence">'
                        r'OCR (\d+) %|</article>)', page, re.S)
    assert (scanned, "87") in badges and (typed, "") in badges
