"""The live page as a story, counts shared with the review, share links, filters and batches."""

from __future__ import annotations

import re
from html import unescape

from agent.models import Batch, Investigation
from agent.sources import folded_sources, source_counts
from archive.models import Document

QUESTION = "Que disent Le Gaulois et L'Intransigeant du discours de M. Lejeune sur les céréales ?"


def _count(html: str, name: str) -> int:
    found = re.search(rf'data-count="{name}">(\d+)', html)
    assert found, f"no {name} count on the page"
    return int(found.group(1))


def test_the_live_summary_and_the_review_show_the_same_counts(client, users, finished):
    client.force_login(users["alice"])
    live = client.get(f"/investigations/{finished.pk}/").content.decode()
    review = client.get(f"/investigations/{finished.pk}/review/").content.decode()
    counts = source_counts(folded_sources(finished))
    for name in ("accepted", "held", "rejected"):
        assert _count(live, name) == getattr(counts, name)
    assert f"Held <span class=\"muted\">({counts.held})" in review
    assert f"Rejected <span class=\"muted\">({counts.rejected})" in review
    assert counts.accepted == len(finished.ranked_keys)


def test_a_held_passage_dropped_from_the_pool_is_counted_as_set_aside(users, finished):
    from agent.engine.events import HeldChunkDropped
    from agent.models import Step

    held = finished.verdicts.filter(decision="hold").exclude(
        document_key__in=finished.ranked_keys).first()
    if held is None:  # make one: hold a rejected passage, as the engine would
        held = finished.verdicts.filter(decision="reject").first()
        held.decision = "hold"
        held.save()
    before = source_counts(folded_sources(finished))
    last = finished.steps.order_by("-seq").first().seq
    event = HeldChunkDropped(chunk_id=held.chunk_id, document_key=held.document_key,
                             auto_held=False, pool_size=10).stamped(
                                 last + 1, held.sub_question_index)
    Step.from_event(finished, event).save()
    after = source_counts(folded_sources(finished))
    assert after.held == before.held and after.set_aside == before.set_aside + 1


def test_the_story_groups_steps_by_sub_question_with_titles_not_keys(client, users, finished):
    client.force_login(users["alice"])
    html = client.get(f"/investigations/{finished.pk}/").content.decode()
    sections = re.findall(r'<section class="subq[^"]*" id="sq-(\d+)"', html)
    assert sections == [str(i) for i in range(finished.sub_questions.count())]
    assert 'class="search-line"' in html
    titles = set(Document.objects.values_list("title", flat=True))
    shown = {unescape(t) for t in re.findall(r'<a class="title"[^>]*>([^<]+)</a>', html)}
    assert shown and shown <= titles
    assert "{'" not in html and "<script>alert(1)</script>" not in html


def test_the_poll_sends_new_sections_out_of_band_and_replaces_known_ones(client, users, finished):
    client.force_login(users["alice"])
    first_section_end = finished.steps.filter(sub_question_index=0).order_by("-seq").first().seq
    body = client.get(f"/investigations/{finished.pk}/steps/?after={first_section_end - 1}"
                      ).content.decode()
    assert 'id="sq-0" data-subquestion="1" hx-swap-oob="true"' in body
    if finished.sub_questions.count() > 1:
        assert 'hx-swap-oob="beforeend:#story"' in body


def test_sharing_again_keeps_the_link_and_a_colleague_sees_whose_it_is(client, users, finished):
    client.force_login(users["alice"])
    client.post(f"/investigations/{finished.pk}/share/", {"enable": "1"})
    finished.refresh_from_db()
    token = finished.share_token
    client.post(f"/investigations/{finished.pk}/share/", {"enable": "1"})
    finished.refresh_from_db()
    assert finished.share_token == token
    page = client.get(f"/investigations/{finished.pk}/").content.decode()
    assert f"?token={token}" in page and "data-copy" in page
    client.force_login(users["bob"])
    shared = client.get(f"/investigations/{finished.pk}/?token={token}").content.decode()
    assert "Shared by <strong>alice</strong>" in shared and "read-only" in shared
    assert 'id="share"' not in shared


def test_the_list_filter_ignores_accents(client, users, finished):
    client.force_login(users["alice"])
    shown = "du discours de M. Lejeune"
    assert shown in client.get("/investigations/?q=cereales").content.decode()
    assert shown in client.get("/investigations/?q=CÉRÉALES").content.decode()
    assert shown not in client.get("/investigations/?q=betteraves").content.decode()


def test_the_ask_page_warns_about_dates_outside_the_archive(client, users, tiny_archive):
    client.force_login(users["alice"])
    page = client.get("/investigations/new/").content.decode()
    assert 'data-archive-first="1887-02-25"' in page and 'data-archive-last="1887-03-01"' in page
    response = client.post("/investigations/new/", {"question": QUESTION,
                                                     "date_from": "1914-08-01"})
    assert response.status_code == 200
    assert "the archive runs from 1887-02-25 to 1887-03-01" in response.content.decode()
    assert not Investigation.objects.exists()


def test_the_viewer_highlights_only_the_evidence_and_links_back(client, users, finished):
    client.force_login(users["alice"])
    key = finished.ranked_keys[0]
    document = Document.objects.get(sub_corpus__slug=key.split(":")[0],
                                    external_id=key.split(":", 1)[1])
    response = client.get(f"/investigations/{finished.pk}/source/?doc={key}&evidence=3-12")
    assert "evidence=3-12" in response["Location"] and f"from={finished.pk}" in response["Location"]
    page = client.get(response["Location"]).content.decode()
    assert f'id="highlight">{document.text[3:12]}</mark>' in page
    assert f"/investigations/{finished.pk}/review/" in page
    assert "<script>" not in page.split("</head>")[1]


def test_batches_are_listed_with_per_question_scores(client, users, finished):
    batch = Batch.objects.create(owner=users["alice"], name="Février")
    Investigation.objects.filter(pk=finished.pk).update(batch=batch, qid="q1",
                                                        gold_keys=finished.ranked_keys[:1])
    client.force_login(users["alice"])
    listing = client.get("/investigations/batches/").content.decode()
    assert f"/investigations/batches/{batch.pk}/" in listing and "Février" in listing
    page = client.get(f"/investigations/batches/{batch.pk}/").content.decode()
    assert "multi-gold MRR" in page and "1 / 1" in page and "all batches" in page


def _section_html(html: str, index: int) -> str:
    start = html.index(f'id="sq-{index}"')
    end = html.find("</section>", start)
    return html[start:end]


def test_a_finished_section_folds_to_its_accepted_rows(client, users, finished):
    client.force_login(users["alice"])
    html = client.get(f"/investigations/{finished.pk}/").content.decode()
    accepted_somewhere = False
    for index in range(finished.sub_questions.count()):
        section = _section_html(html, index)
        assert "subq-done" in html[html.rindex("<section", 0, html.index(f'id="sq-{index}"')):
                                   html.index(f'id="sq-{index}"')]
        trail = section.index('<details class="subq-trail"')
        # Searches, held and rejected rows, briefing and notes: all behind the one fold.
        for marker in ('class="search-line"', 'class="passage passage-reject',
                       'class="passage passage-hold', 'class="internals"'):
            assert marker not in section[:trail], f"{marker} shown before the fold"
        accepted = finished.verdicts.filter(sub_question_index=index, decision="accept",
                                            source__in=["agent", "held_reeval"]).count()
        assert section[:trail].count('class="passage passage-accept') == accepted
        accepted_somewhere = accepted_somewhere or accepted > 0
    assert accepted_somewhere


def test_the_live_page_shows_the_historians_decisions(client, users, finished):
    from agent.review import services as review_services

    key = finished.ranked_keys[0]
    review_services.verdict_override(investigation=finished, user=users["alice"], document_key=key,
                              decision="reject", note="")
    client.force_login(users["alice"])
    html = client.get(f"/investigations/{finished.pk}/").content.decode()
    rows = re.findall(rf'<li class="passage passage-accept([^"]*)" data-kind="verdict" '
                      rf'data-document="{re.escape(key)}">(.*?)</li>', html, re.S)
    assert rows and all("overruled" in classes for classes, _ in rows)
    assert all("rejected by alice" in body for _, body in rows)
    others = re.findall(r'<li class="passage passage-accept([^"]*)" data-kind="verdict" '
                        r'data-document="(?!' + re.escape(key) + r')', html)
    assert all("overruled" not in classes for classes in others)


def test_every_refresh_counts_all_the_sub_questions(client, users, finished):
    client.force_login(users["alice"])
    total = finished.sub_questions.count()
    assert total > 1, "the fixture's run should have several sub-questions"
    last = finished.steps.filter(sub_question_index=total - 1).order_by("-seq").first().seq
    body = client.get(f"/investigations/{finished.pk}/steps/?after={last - 1}").content.decode()
    assert body.count('<section class="subq') == 1  # only the section that changed is sent
    assert f'data-count="sub-questions">{total}<' in body


INTERNAL_WORDS = ("finish_action", "budget", "bm25", "next search:", "pending batch", "source(s)",
                  "held_reeval", "prompt", "_")


def test_the_folded_notes_speak_the_historians_language(client, users, finished):
    client.force_login(users["alice"])
    html = client.get(f"/investigations/{finished.pk}/").content.decode()
    notes = re.findall(r'<details class="(?:internals|briefing)">(.*?)</details>', html, re.S)
    assert notes
    text = unescape(re.sub(r"<[^>]+>", " ", " ".join(notes)))
    for word in INTERNAL_WORDS:
        assert word not in text, f"{word!r} in the notes: {text}"
    keys = set(finished.verdicts.values_list("document_key", flat=True))
    assert not any(key in text for key in keys), "document keys in the notes"
