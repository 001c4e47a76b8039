"""The cited answer on the Django side: drafted from the sources in force, kept, shown, exported."""

from __future__ import annotations

import datetime as dt
import json
import re

import pytest
from django.test import Client

from agent.investigations import services
from agent.models import AnswerDraft, Investigation
from agent.review import services as review_services
from archive.models import Document

HOSTILE = "lintransigeant_1887_v1:18870301"  # its OCR ends in <script>alert(1)</script>
SCRIPT = "<script>alert(1)</script>"
CITATION = re.compile(
    r'<a class="answer-citation" data-number="(\d+)" data-document="([^"]+)"[^>]*'
    r'href="/investigations/(\d+)/source/\?doc=([^&"]+)&amp;evidence=(\d+)-(\d+)')


def _draft_url(investigation: Investigation) -> str:
    return f"/investigations/{investigation.pk}/answer/"


def _review(client, investigation: Investigation, query: str = "") -> str:
    response = client.get(f"/investigations/{investigation.pk}/review/{query}")
    assert response.status_code == 200
    return response.content.decode()


def _numbers_on_the_review_page(page: str) -> dict[str, int]:
    """The rank each accepted source shows on the review page, by document key."""
    ranked = page[page.index('<div id="ranked">'):page.index("<h2>Held")]
    return {key: int(rank) for key, rank in re.findall(
        r'<article class="source state-accepted" data-document="([^"]+)"[^>]*>\s*<header>\s*'
        r'<span class="rank">(\d+)</span>', ranked)}


def _texts() -> dict[str, str]:
    return {document.key: document.text for document in Document.objects.all()}


def test_the_owner_drafts_an_answer_citing_the_sources_by_their_review_numbers(
        client, users, finished):
    client.force_login(users["alice"])
    assert "No answer drafted yet." in _review(client, finished)
    response = client.post(_draft_url(finished))
    assert response.status_code == 302 and response["Location"].endswith("/review/#answer")
    draft = AnswerDraft.objects.get(investigation=finished)
    assert draft.drafter == "extractive" and draft.user == users["alice"]
    assert draft.source_keys == finished.ranked_keys
    page = _review(client, finished)
    assert "Extractive answer: sentences quoted from the accepted sources" in page
    numbers = _numbers_on_the_review_page(page)
    assert numbers == {key: rank for rank, key in enumerate(finished.ranked_keys, start=1)}
    texts = _texts()
    links = CITATION.findall(page)
    assert {key for _, key, *_ in links} == set(finished.ranked_keys), "every source is cited"
    for number, key, pk, doc, start, end in links:
        assert int(number) == numbers[key], "[n] is the source's number on the review page"
        assert int(pk) == finished.pk and doc.replace("%3A", ":") == key
        cited = texts[key][int(start):int(end)]
        assert cited and cited in " ".join(s.text for s in draft.answer_sections[0].sentences
                                           + draft.answer_sections[-1].sentences)
    # A citation opens the viewer on its span, highlighted.
    number, key, pk, doc, start, end = links[0]
    viewer = client.get(f"/investigations/{pk}/source/?doc={doc}&evidence={start}-{end}")
    assert viewer.status_code == 302
    assert f"evidence={start}-{end}" in viewer["Location"] and viewer["Location"].endswith(
        "#highlight")
    assert client.get(viewer["Location"]).status_code == 200


def test_the_answer_follows_the_historians_decisions(client, users, finished):
    alice = users["alice"]
    rejected, kept = finished.ranked_keys
    review_services.verdict_override(investigation=finished, user=alice, document_key=rejected,
                              decision="reject", note="hors sujet")
    review_services.verdict_override(investigation=finished, user=alice, document_key=HOSTILE,
                              decision="accept", note="à citer")
    draft = review_services.answer_draft(investigation=finished, user=alice)
    cited = {c.document_key: c.number for section in draft.answer_sections
             for sentence in section.sentences for c in sentence.citations}
    assert cited == {kept: 1, HOSTILE: 2}, "rejected by the historian: out; accepted: in"
    assert [s["document_key"] for s in draft.sources] == [kept, HOSTILE]


def test_a_draft_is_refused_while_the_run_is_going(client, users, finished):
    Investigation.objects.filter(pk=finished.pk).update(status=Investigation.Status.RUNNING)
    client.force_login(users["alice"])
    page = _review(client, finished)
    assert "The answer can be drafted once the run has ended." in page
    assert 'data-testid="draft-answer"' not in page
    response = client.post(_draft_url(finished), follow=True)
    assert "The run is still going (running)" in response.content.decode()
    assert not AnswerDraft.objects.exists()


def test_a_draft_with_no_accepted_source_is_refused(client, users, finished):
    for key in finished.ranked_keys:
        review_services.verdict_override(investigation=finished, user=users["alice"],
                                         document_key=key,
                                  decision="hold")
    with pytest.raises(services.InvestigationError, match="No source is accepted"):
        review_services.answer_draft(investigation=finished, user=users["alice"])
    assert not AnswerDraft.objects.exists()


def test_only_the_owner_drafts_and_only_those_it_is_shared_with_see(client, users, finished):
    draft = review_services.answer_draft(investigation=finished, user=users["alice"])
    client.force_login(users["eve"])
    assert client.post(_draft_url(finished)).status_code == 404
    assert client.get(f"/investigations/{finished.pk}/review/?draft={draft.pk}").status_code == 404
    token = services.investigation_share(investigation=finished)
    assert client.post(_draft_url(finished) + f"?token={token}").status_code == 404
    assert AnswerDraft.objects.count() == 1
    page = _review(client, finished, f"?token={token}")
    links = re.findall(r'<a class="answer-citation"[^>]*href="([^"]+)"', page)
    assert links and all(link.endswith(f"&amp;token={token}") for link in links)
    assert 'data-testid="draft-answer"' not in page, "a shared link is read-only"


def test_drafting_needs_the_csrf_token(users, finished):
    client = Client(enforce_csrf_checks=True)
    client.force_login(users["alice"])
    assert client.post(_draft_url(finished)).status_code == 403
    assert not AnswerDraft.objects.exists()
    page = client.get(f"/investigations/{finished.pk}/review/").content.decode()
    token = re.search(r'action="/investigations/\d+/answer/"[^>]*>\s*<input type="hidden" '
                      r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
    assert client.post(_draft_url(finished), {"csrfmiddlewaretoken": token}).status_code == 302
    assert AnswerDraft.objects.count() == 1


def test_hostile_ocr_in_a_cited_sentence_is_escaped(client, users, finished):
    review_services.verdict_override(investigation=finished, user=users["alice"],
                                     document_key=HOSTILE,
                              decision="accept")
    draft = review_services.answer_draft(investigation=finished, user=users["alice"])
    assert any(SCRIPT in s.text for sec in draft.answer_sections for s in sec.sentences), (
        "the hostile sentence is quoted, or the check below proves nothing")
    client.force_login(users["alice"])
    page = _review(client, finished)
    answer = page[page.index('<section id="answer"'):page.index('<section id="sources">')]
    assert SCRIPT not in answer and "&lt;script&gt;alert(1)&lt;/script&gt;" in answer
    markdown = client.get(f"/investigations/{finished.pk}/export/markdown/").content.decode()
    assert SCRIPT not in markdown and "\\<script>alert(1)\\</script>" in markdown


def test_changed_decisions_are_noticed_and_older_drafts_stay_listed(client, users, finished):
    client.force_login(users["alice"])
    client.post(_draft_url(finished))
    first = AnswerDraft.objects.get()
    assert 'data-testid="answer-stale"' not in _review(client, finished)
    review_services.verdict_override(investigation=finished, user=users["alice"],
                              document_key=finished.ranked_keys[0], decision="reject")
    page = _review(client, finished)
    assert 'data-testid="answer-stale"' in page and "The decisions changed since this draft" in page
    assert ">Redraft</button>" in page
    client.post(_draft_url(finished))
    second = AnswerDraft.objects.exclude(pk=first.pk).get()
    page = _review(client, finished)
    assert 'data-testid="answer-stale"' not in page
    listed = re.findall(r'<li data-draft="(\d+)"><a href="[^"]+"><time datetime="([^"]+)"',
                        page)
    assert [pk for pk, _ in listed] == [str(second.pk), str(first.pk)], "newest first"
    assert [dt.datetime.fromisoformat(at) for _, at in listed] == [
        second.created_at, first.created_at], "each draft listed with its date"
    older = _review(client, finished, f"?draft={first.pk}")
    assert "An earlier draft" in older and 'data-testid="answer-stale"' in older
    assert client.get(f"/investigations/{finished.pk}/review/?draft=999999").status_code == 404


def test_the_llm_policy_drafts_through_the_configured_model(client, users, finished, settings,
                                                            stub_llm):
    settings.TRACE_LLM_BASE_URL = stub_llm.url
    Investigation.objects.filter(pk=finished.pk).update(policy="llm",
                                                        price_input_per_million=1.0,
                                                        price_output_per_million=2.0)
    finished.refresh_from_db()
    before = len(stub_llm.state.requests)
    draft = review_services.answer_draft(investigation=finished, user=users["alice"])
    assert len(stub_llm.state.requests) == before + 1
    assert draft.drafter == "llm" and draft.model and draft.reply
    assert draft.usage.input_tokens > 0 and draft.cost > 0
    cited = sorted(c.number for sec in draft.answer_sections for s in sec.sentences
                   for c in s.citations)
    assert cited == [1, 2]
    client.force_login(users["alice"])
    assert "Answer written by a language model" in _review(client, finished)


def test_the_llm_policy_without_an_endpoint_is_refused(users, finished, settings):
    settings.TRACE_LLM_BASE_URL = ""
    Investigation.objects.filter(pk=finished.pk).update(policy="llm")
    finished.refresh_from_db()
    with pytest.raises(services.InvestigationError, match="TRACE_LLM_BASE_URL"):
        review_services.answer_draft(investigation=finished, user=users["alice"])
    assert not AnswerDraft.objects.exists()


def test_the_markdown_export_carries_the_newest_draft_with_the_lists_numbers(
        client, users, finished):
    from markdown_it import MarkdownIt

    alice = users["alice"]
    review_services.answer_draft(investigation=finished, user=alice)
    order = list(reversed(finished.ranked_keys))
    review_services.sources_reorder(investigation=finished, user=alice, document_keys=order)
    review_services.answer_draft(investigation=finished, user=alice)
    client.force_login(alice)
    text = client.get(f"/investigations/{finished.pk}/export/markdown/").content.decode()
    tokens = MarkdownIt("commonmark").parse(text)
    headings = [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open"]
    plan = [f"Sub-question {sq.index + 1}: {sq.text}" for sq in finished.sub_questions.all()]
    assert headings[1:] == ["Answer", *plan, "Sources"]
    assert not any(t.type.startswith("html") for t in tokens)
    items = [i for i, t in enumerate(tokens) if t.type == "list_item_open" and t.level == 1]
    assert len(items) == len(order), "the answer adds no list item"
    answer = text[text.index("## Answer"):text.index("## Sources")]
    assert "The decisions changed" not in answer
    gaulois = "M. Lejeune défend la protection de l'agriculture"
    position = order.index("legaulois_1887_v1:18870226") + 1
    assert re.search(re.escape(gaulois) + r"[^\[]*\[" + str(position) + r"\]", answer)
    # A later decision makes the exported draft out of date, and the export says so.
    review_services.verdict_override(investigation=finished, user=alice, document_key=order[0],
                              decision="reject")
    text = client.get(f"/investigations/{finished.pk}/export/markdown/").content.decode()
    assert "The decisions changed after this draft" in text


def test_the_trace_keeps_every_draft_with_its_sources_and_sentences(client, users, finished):
    alice = users["alice"]
    review_services.answer_draft(investigation=finished, user=alice)
    review_services.verdict_override(investigation=finished, user=alice,
                              document_key=finished.ranked_keys[0], decision="reject")
    review_services.answer_draft(investigation=finished, user=alice)
    client.force_login(alice)
    trace = json.loads(client.get(f"/investigations/{finished.pk}/export/trace-json/").content)
    first, second = trace["answer_drafts"]
    assert first["drafter"] == second["drafter"] == "extractive" and first["drafted_by"] == "alice"
    assert [s["document_key"] for s in first["sources"]] == finished.ranked_keys
    assert [s["document_key"] for s in second["sources"]] == finished.ranked_keys[1:]
    assert first["decisions_changed_since"] and not second["decisions_changed_since"]
    cited = [c for section in second["sections"] for s in section["sentences"]
             for c in s["citations"]]
    assert cited and all(c["document_key"] == finished.ranked_keys[1] and c["number"] == 1
                         for c in cited)
    assert re.search(r"[+-]\d\d:\d\d$", first["created_at"])


def test_a_hostile_draft_adds_no_markdown_structure(client, users, finished):
    from markdown_it import MarkdownIt

    hostile = ["# Titre", "1. premier", "> citation", "[lien](javascript:alert(1))", "<b>gras</b>",
               "- tiret", "`code`", "ligne\n\n# coupée"]
    citation = {"number": 1, "document_key": finished.ranked_keys[0], "start": 0, "end": 5}
    AnswerDraft.objects.create(
        investigation=finished, user=users["alice"], drafter="llm",
        sources=[{"number": 1, "document_key": finished.ranked_keys[0], "title": "t"},
                 {"number": 2, "document_key": finished.ranked_keys[1], "title": "t"}],
        sections=[{"heading": "## Faux titre\n> bloc", "sentences": [
            {"text": text, "citations": [citation]} for text in hostile]}])
    client.force_login(users["alice"])
    text = client.get(f"/investigations/{finished.pk}/export/markdown/").content.decode()
    tokens = MarkdownIt("commonmark").parse(text)
    answer_tokens = tokens[:next(i for i, t in enumerate(tokens)
                                 if t.type == "inline" and t.content == "Sources")]
    kinds = {t.type for t in answer_tokens}
    assert "blockquote_open" not in kinds and "bullet_list_open" not in kinds
    assert "ordered_list_open" not in kinds and "code_block" not in kinds
    assert [t.tag for t in answer_tokens if t.type == "heading_open"] == ["h1", "h2", "h3", "h2"]
    inline = [c for t in answer_tokens if t.type == "inline" for c in t.children or []]
    assert not any(c.type in ("link_open", "html_inline", "code_inline") for c in inline)
    page = client.get(f"/investigations/{finished.pk}/review/").content.decode()
    assert "<b>gras</b>" not in page and "&lt;b&gt;gras&lt;/b&gt;" in page


def test_dropped_sentences_are_counted_on_the_page_and_in_the_export(client, users, finished):
    from agent.engine.answer_llm import model_answer
    from agent.review.cited_answer import answer_material, drafted_from
    from agent.sources import reviewed_sources
    from tests.fakes.chat import ScriptedChatModel

    rows = reviewed_sources(finished)
    reply = json.dumps({"sentences": [
        {"text": "Le Gaulois rapporte le discours.", "citations": [{"source": 2, "span": 1}]},
        {"text": "Une source inventée le confirme.", "citations": [{"source": 9, "span": 1}]},
        "garbage"]})
    drafted = model_answer(answer_material(finished, rows), ScriptedChatModel([reply]))
    AnswerDraft.objects.create(investigation=finished, user=users["alice"], drafter="llm",
                               sources=drafted_from(rows), sections=drafted.sections_json(),
                               dropped=drafted.dropped, reply=drafted.reply)
    client.force_login(users["alice"])
    page = _review(client, finished)
    assert "2 sentences dropped: they cited no accepted source." in page
    assert "Une source inventée" not in page, "a dropped sentence is never shown"
    [(number, key, *_)] = CITATION.findall(page)
    assert (number, key) == ("2", finished.ranked_keys[1])
    markdown = client.get(f"/investigations/{finished.pk}/export/markdown/").content.decode()
    assert "Le Gaulois rapporte le discours. [2]" in markdown
    assert "2 sentences dropped: they cited no accepted source." in markdown
    assert "Une source inventée" not in markdown


def _cited(draft: AnswerDraft, key: str) -> list[tuple[int, int, str]]:
    return [(citation.start, citation.end, sentence.text)
            for section in draft.answer_sections for sentence in section.sentences
            for citation in sentence.citations if citation.document_key == key]


def test_the_answer_quotes_the_passage_the_historian_kept(client, users, finished):
    key = finished.ranked_keys[0]
    text = _texts()[key]
    start, end = 0, text.index(" ", len(text) // 2)  # the first half of its one sentence
    client.force_login(users["alice"])
    client.post(_draft_url(finished))
    agents = _cited(AnswerDraft.objects.get(), key)
    assert agents and any(cited_end > end for _, cited_end, _ in agents), (
        "the agent's quote reaches past the passage the historian will keep")
    assert 'data-testid="answer-quotes-stale"' not in _review(client, finished)
    assert client.post(f"/investigations/{finished.pk}/quote/",
                       {"document": key, "start": start, "end": end}).status_code == 302
    assert 'data-testid="answer-quotes-stale"' in _review(client, finished)

    client.post(_draft_url(finished))
    draft = AnswerDraft.objects.filter(investigation=finished).order_by("-id").first()
    cited = _cited(draft, key)
    assert cited, "the source is still cited"
    for cited_start, cited_end, sentence in cited:
        assert start <= cited_start < cited_end <= end, "only the kept passage is cited"
        assert sentence == " ".join(text[cited_start:cited_end].split())
    page = _review(client, finished)
    assert f"evidence={cited[0][0]}-{cited[0][1]}" in page
    assert 'data-testid="answer-quotes-stale"' not in page
