"""Pages: owners see and change only their own investigations; exports parse back."""

from __future__ import annotations

import csv
import io
import json

import pytest

from agent.engine.offline import OfflinePolicy
from agent.investigations import execution, services
from agent.models import Investigation
from agent.review import services as review_services

QUESTION = "Que disent Le Gaulois et L'Intransigeant du discours de M. Lejeune sur les céréales ?"


def _login(client, user):
    client.force_login(user)
    return client


def test_each_user_lists_only_their_own_investigations(client, users, finished):
    services.investigation_create(owner=users["bob"], question="Question de Bob ?", enqueue=False)
    page = _login(client, users["alice"]).get("/investigations/").content.decode()
    assert "Lejeune" in page and "Question de Bob" not in page


@pytest.mark.parametrize("path", ["", "steps/?after=0", "review/", "export/csv/",
                                  "evidence/?doc=legaulois_1887_v1:18870226"])
def test_an_outsider_gets_404_on_every_page_of_another_users_investigation(
        client, users, finished, path):
    response = _login(client, users["eve"]).get(f"/investigations/{finished.pk}/{path}")
    assert response.status_code == 404


@pytest.mark.parametrize("path", ["cancel/", "resume/", "override/", "note/", "share/"])
def test_an_outsider_cannot_change_another_users_investigation(client, users, finished, path):
    response = _login(client, users["eve"]).post(
        f"/investigations/{finished.pk}/{path}",
        {"document": finished.ranked_keys[0], "decision": "reject", "note": "x"})
    assert response.status_code == 404
    assert not finished.verdicts.filter(source="human").exists()


def test_a_share_link_gives_read_only_access(client, users, finished):
    token = services.investigation_share(investigation=finished)
    _login(client, users["bob"])
    page = client.get(f"/investigations/{finished.pk}/review/?token={token}")
    assert page.status_code == 200
    assert "Save note" not in page.content.decode()
    assert client.get(f"/investigations/{finished.pk}/review/?token=wrong").status_code == 404
    response = client.post(f"/investigations/{finished.pk}/override/?token={token}",
                           {"document": finished.ranked_keys[0], "decision": "reject"})
    assert response.status_code == 404
    services.investigation_share(investigation=finished, enable=False)
    assert client.get(f"/investigations/{finished.pk}/review/?token={token}").status_code == 404


def test_pages_require_login(client, finished):
    response = client.get(f"/investigations/{finished.pk}/")
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]


def test_the_step_poll_returns_new_steps_and_stops_when_finished(client, users, finished):
    _login(client, users["alice"])
    body = client.get(f"/investigations/{finished.pk}/steps/?after=0",
                      headers={"HX-Request": "true"}).content.decode()
    assert 'data-kind="plan"' in body
    assert 'id="poller"' not in body, "a finished run sends no new poller"
    Investigation.objects.filter(pk=finished.pk).update(status="running")
    last = finished.steps.order_by("-seq").first().seq
    body = client.get(f"/investigations/{finished.pk}/steps/?after={last}").content.decode()
    assert 'id="poller"' in body and f"after={last}" in body
    assert "data-kind=" not in body


def test_ocr_and_rationale_text_is_escaped(client, users, finished):
    _login(client, users["alice"])
    for path in ("", "review/"):
        page = client.get(f"/investigations/{finished.pk}/{path}").content.decode()
        assert "<script>alert(1)</script>" not in page


def test_the_owner_overrides_a_verdict_and_the_review_reflects_it(client, users, finished):
    _login(client, users["alice"])
    key = finished.ranked_keys[0]
    response = client.post(f"/investigations/{finished.pk}/override/",
                           {"document": key, "decision": "reject", "note": "hors sujet"})
    assert response.status_code == 302
    finished.refresh_from_db()
    page = client.get(f"/investigations/{finished.pk}/review/").content.decode()
    assert "reject by alice" in page
    assert finished.verdicts.filter(source="agent", document_key=key).exists()


def test_every_export_parses_back(client, users, finished):
    import bibtexparser
    import rispy
    from citeproc import (
        Citation,
        CitationItem,
        CitationStylesBibliography,
        CitationStylesStyle,
        formatter,
    )
    from citeproc.source.json import CiteProcJSON

    _login(client, users["alice"])
    review_services.note_add(investigation=finished, user=users["alice"],
                      document_key=finished.ranked_keys[0], note="à relire")
    expected = set(finished.ranked_keys)

    def get(fmt):
        response = client.get(f"/investigations/{finished.pk}/export/{fmt}/")
        assert response.status_code == 200
        assert "attachment" in response["Content-Disposition"]
        return response.content.decode()

    library = bibtexparser.parse_string(get("bibtex"))
    assert not library.failed_blocks
    assert len(library.entries) == len(expected)
    assert all(entry.fields_dict["date"].value.startswith("1887") for entry in library.entries)

    ris = rispy.loads(get("ris"))
    assert {entry["id"] for entry in ris} == expected

    csl = json.loads(get("csl-json"))
    assert {item["id"] for item in csl} == expected
    source = CiteProcJSON(csl)
    style = CitationStylesStyle("harvard-cite-them-right", validate=False)
    bibliography = CitationStylesBibliography(style, source, formatter.plain)
    bibliography.register(Citation([CitationItem(item["id"]) for item in csl]))
    assert len(bibliography.bibliography()) == len(expected)

    rows = list(csv.DictReader(io.StringIO(get("csv"))))
    assert [row["key"] for row in rows] == finished.ranked_keys
    assert any(row["notes"] == "à relire" for row in rows)
    assert all(row["quote"] and row["rationale"] for row in rows)

    markdown = get("markdown")
    assert "offline policy (no LLM)" in markdown and finished.ranked_keys[0] in markdown

    trace = json.loads(get("trace-json"))
    assert trace["policy_label"] == "offline policy (no LLM)"
    assert [s["seq"] for s in trace["steps"]] == list(range(1, len(trace["steps"]) + 1))
    assert client.get(f"/investigations/{finished.pk}/export/pdf/").status_code == 400


def test_the_evidence_path_links_question_search_chunk_verdict(client, users, finished):
    _login(client, users["alice"])
    key = finished.ranked_keys[0]
    page = client.get(f"/investigations/{finished.pk}/evidence/", {"doc": key}).content.decode()
    assert finished.question.replace("'", "&#x27;") in page
    for label in ("sub-question", "search", "chunk", "verdict", "rationale"):
        assert f'<span class="tag">{label}' in page
    assert "not recorded" not in page


def test_asking_creates_and_queues_an_investigation(client, users, db,
                                                    django_capture_on_commit_callbacks):
    _login(client, users["alice"])
    with django_capture_on_commit_callbacks() as callbacks:
        response = client.post("/investigations/new/", {"question": QUESTION})
    investigation = Investigation.objects.get(owner=users["alice"])
    assert response.status_code == 302
    assert response["Location"] == f"/investigations/{investigation.pk}/"
    assert len(callbacks) == 1
    assert investigation.policy_label == "offline policy (no LLM)"


def test_a_bad_batch_file_names_the_line_and_creates_nothing(client, users):
    from django.core.files.uploadedfile import SimpleUploadedFile

    _login(client, users["alice"])
    bad = b'{"question": "Une ?"}\n{not json}\n'
    response = client.post("/investigations/batches/new/",
                           {"file": SimpleUploadedFile("q.jsonl", bad)})
    assert "Line 2" in response.content.decode()
    assert not Investigation.objects.exists()


def test_a_batch_creates_one_investigation_per_question_and_reports_metrics(
        client, users, tiny_archive, django_capture_on_commit_callbacks):
    from django.core.files.uploadedfile import SimpleUploadedFile

    _login(client, users["alice"])
    lines = [{"qid": f"q{i}", "question": QUESTION, "question_type": "MH",
              "gold_ids": ["legaulois_1887_v1:18870226", "lintransigeant_1887_v1:18870227"]}
             for i in range(2)]
    payload = "\n".join(json.dumps(line) for line in lines).encode()
    with django_capture_on_commit_callbacks():
        response = client.post("/investigations/batches/new/",
                               {"file": SimpleUploadedFile("q.jsonl", payload)})
    batch_url = response["Location"]
    investigations = list(Investigation.objects.filter(owner=users["alice"]))
    assert len(investigations) == 2
    for investigation in investigations:
        execution.investigation_execute(investigation_id=investigation.pk,
                                       retriever=tiny_archive, policy=OfflinePolicy())
    page = client.get(batch_url).content.decode()
    assert "2</strong> of 2 finished" in page
    assert "R@10" in page and "MRR" in page


def test_csv_cells_that_look_like_formulas_are_neutralised():
    from agent.review.export_safety import csv_cell

    assert csv_cell("=HYPERLINK(1)") == "'=HYPERLINK(1)"
    assert csv_cell("@cmd") == "'@cmd"
    assert csv_cell("Le Gaulois") == "Le Gaulois"
    assert csv_cell(3) == 3


def test_share_tokens_are_compared_in_constant_time(client, users, finished, monkeypatch):
    import hmac

    from agent.investigations import selectors

    token = services.investigation_share(investigation=finished)
    compared = []
    real = hmac.compare_digest

    def recording(a, b):
        compared.append((a, b))
        return real(a, b)

    monkeypatch.setattr(selectors.hmac, "compare_digest", recording)
    _login(client, users["bob"])
    assert client.get(f"/investigations/{finished.pk}/review/?token={token}").status_code == 200
    assert compared == [(token.encode(), token.encode())]
    for wrong in (token[:-1], token + "x", "é" * len(token), ""):
        assert client.get(f"/investigations/{finished.pk}/review/",
                          {"token": wrong}).status_code == 404, wrong
