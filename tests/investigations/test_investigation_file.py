"""An investigation moves as one file: exported, imported where the same documents live, refused
when tampered with or of another schema version (nothing written), missing documents reported."""

from __future__ import annotations

import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from agent.investigations import services
from agent.investigations.chat import stored_prompt_text
from agent.investigations.investigation_file import (
    SCHEMA_VERSION,
    InvestigationFileError,
    investigation_file,
    payload_digest,
)
from agent.models import (
    AnswerDraft,
    DocumentNote,
    EvidencePick,
    Investigation,
    LLMCall,
    SourceOrder,
    Step,
    Verdict,
)
from agent.review import services as review_services
from agent.sources import order_in_force, reviewed_sources
from archive.models import Chunk, Document

pytestmark = pytest.mark.django_db


def _document(key: str) -> Document:
    slug, external_id = key.split(":", 1)
    return Document.objects.get(sub_corpus__slug=slug, external_id=external_id)


def _worked_on(investigation: Investigation, user) -> Investigation:
    """The historian's work on a finished run: override, note, quote, order, draft, a model call."""
    keys = investigation.ranked_keys
    assert len(keys) >= 2
    review_services.verdict_override(investigation=investigation, user=user, document_key=keys[1],
                              decision="reject", note="Hors sujet <b>ici</b>.")
    review_services.note_add(investigation=investigation, user=user, document_key=keys[0],
                      note="À relire avec la séance du 25 février.")
    text = _document(keys[0]).text
    review_services.evidence_pick(investigation=investigation, user=user, document_key=keys[0],
                           start=0, end=len(text.split(".")[0]) + 1)
    accepted = [r.document_key for r in reviewed_sources(investigation) if r.state == "accepted"]
    review_services.sources_reorder(investigation=investigation, user=user,
                             document_keys=list(reversed(accepted)))
    review_services.answer_draft(investigation=investigation, user=user)
    LLMCall.objects.create(investigation=investigation, ordinal=0, role="agent",
                           prompt_hash="abc", model="m", response='{"action": "finish"}',
                           system_prompt=stored_prompt_text("System prompt."),
                           user_prompt=stored_prompt_text("User prompt: « chunk 12 »."),
                           input_tokens=10, output_tokens=3)
    return investigation


def _as_the_other_instance() -> None:
    """The other instance holds the same documents under other row ids (a fresh ingest)."""
    for document in list(Document.objects.order_by("pk")):
        chunks = list(document.chunks.order_by("ordinal"))
        document.delete()
        document.pk = None
        document.save()
        for chunk in chunks:
            chunk.pk = None
            chunk.document = document
            chunk.save()


def _summary(investigation: Investigation) -> dict:
    """What a historian sees of an investigation, free of row ids."""
    rows = reviewed_sources(investigation)
    chunk_keys = {c.pk: (c.document.key, c.ordinal) for c in
                  Chunk.objects.select_related("document__sub_corpus")}
    verdicts = [(v.document_key, v.decision, v.source, v.note, v.evidence_start,
                 v.evidence_text, v.user.username if v.user else None, v.created_at,
                 chunk_keys.get(v.chunk_id), v.step.seq if v.step else None)
                for v in investigation.verdicts.order_by("id")]
    steps = []
    for step in investigation.steps.order_by("seq"):
        payload = dict(step.payload)
        for name in ("chunk_id",):
            if name in payload:
                payload[name] = chunk_keys.get(payload[name])
        for name in ("chunk_ids", "shown_chunk_ids"):
            if name in payload:
                payload[name] = [chunk_keys.get(i) for i in payload[name]]
        steps.append((step.seq, step.kind, step.created_at, payload))
    calls = [(c.ordinal, c.system_prompt.text, c.user_prompt.text, c.response)
             for c in investigation.llm_call_records.all()]
    return {
        "question": investigation.question, "status": investigation.status,
        "created_at": investigation.created_at, "ranked_keys": investigation.ranked_keys,
        "sources": [(r.document_key, r.state, r.decision.by, r.decision.user, r.evidence)
                    for r in rows],
        "order": order_in_force(investigation, rows).keys,
        "verdicts": verdicts, "steps": steps, "calls": calls,
        "notes": [(n.document_key, n.text, n.user.username, n.created_at)
                  for n in investigation.notes.all()],
        "picks": [(p.document_key, p.start, p.end, p.text) for p in
                  investigation.evidence_picks.all()],
        "drafts": [(d.drafter, d.sources, d.sections, d.created_at)
                   for d in investigation.answer_drafts.all()],
    }


def _counts() -> tuple[int, ...]:
    return tuple(model.objects.count() for model in (
        Investigation, Step, Verdict, LLMCall, DocumentNote, EvidencePick, SourceOrder,
        AnswerDraft))


def test_round_trip_to_an_instance_with_other_row_ids(users, finished):
    investigation = _worked_on(finished, users["alice"])
    before = _summary(investigation)
    data = investigation_file(investigation)
    _as_the_other_instance()
    investigation.delete()
    old_chunk_ids = {c for s in json.loads(data)["payload"]["chunks"] for c in [s["id"]]}
    assert not Chunk.objects.filter(pk__in=old_chunk_ids).exists()  # every id changed

    result = services.investigation_import(owner=users["alice"], data=data)

    assert result.missing_documents == {} and result.unmatched_chunks == 0
    assert result.other_authors == []
    imported = Investigation.objects.get(pk=result.investigation.pk)
    assert imported.owner == users["alice"]
    after = _summary(imported)
    assert after == before
    assert all(v[8] is not None for v in after["verdicts"] if v[2] != "human")


def test_another_historian_imports_it_and_the_authors_are_not_invented(client, users, finished):
    investigation = _worked_on(finished, users["alice"])
    data = investigation_file(investigation)
    result = services.investigation_import(owner=users["bob"], data=data)
    assert result.other_authors == ["alice"]
    imported = result.investigation
    assert imported.owner == users["bob"] and imported.pk != investigation.pk
    assert not imported.verdicts.filter(user__isnull=False).exists()
    human = imported.verdicts.get(source="human")
    assert human.note == "Hors sujet <b>ici</b>."
    assert [r.decision.user for r in reviewed_sources(imported) if r.decision.by == "historian"] \
        == ["a former user"]
    client.force_login(users["bob"])
    review = client.get(f"/investigations/{imported.pk}/review/").content.decode()
    assert "À relire avec la séance du 25 février. <span class=\"muted\">— a former user," in review


def test_a_missing_document_is_reported_and_its_passages_name_no_chunk(users, finished):
    investigation = _worked_on(finished, users["alice"])
    data = investigation_file(investigation)
    gone_key = investigation.ranked_keys[1]
    changed_key = investigation.ranked_keys[0]
    _document(gone_key).delete()
    changed = _document(changed_key)
    changed.content_hash = "0" * 64
    changed.save()
    documents_before = Document.objects.count()

    result = services.investigation_import(owner=users["alice"], data=data)

    assert result.missing_documents == {gone_key: "not in this archive",
                                        changed_key: "its text differs in this archive"}
    assert result.unmatched_chunks >= 2
    assert Document.objects.count() == documents_before  # nothing invented
    imported = result.investigation
    for verdict in imported.verdicts.filter(document_key__in=[gone_key, changed_key]):
        assert verdict.chunk_id is None
    for step in imported.steps.filter(kind="verdict"):
        if step.payload["document_key"] in (gone_key, changed_key):
            assert step.payload["chunk_id"] == 0
        else:
            assert Chunk.objects.filter(pk=step.payload["chunk_id"]).exists()


def _envelope(data: bytes) -> dict:
    return json.loads(data)


def _refused(users, data: bytes, reason: str) -> None:
    counts = _counts()
    with pytest.raises(InvestigationFileError, match=reason):
        services.investigation_import(owner=users["alice"], data=data)
    assert _counts() == counts


def test_a_tampered_file_is_refused_and_nothing_is_written(users, finished):
    data = investigation_file(_worked_on(finished, users["alice"]))
    envelope = _envelope(data)
    envelope["payload"]["verdicts"][-1]["decision"] = "accept"
    _refused(users, json.dumps(envelope).encode(), "checksum does not match")
    _refused(users, data[:-40], "not UTF-8 JSON")
    _refused(users, b"\xff\xfe", "not UTF-8 JSON")
    _refused(users, b'{"format": "something else"}', "not a TRACE investigation file")


def test_a_file_of_another_schema_version_is_refused(users, finished):
    envelope = _envelope(investigation_file(finished))
    envelope["schema_version"] = SCHEMA_VERSION + 1
    _refused(users, json.dumps(envelope).encode(), f"schema version {SCHEMA_VERSION + 1}")


def _resealed(envelope: dict) -> bytes:
    """A file edited and its checksum recomputed: the checks of its fields still apply."""
    envelope["sha256"] = payload_digest(envelope["payload"])
    return json.dumps(envelope).encode()


@pytest.mark.parametrize(("edit", "reason"), [
    (lambda p: p["verdicts"][0].update(decision="maybe"), "decision"),
    (lambda p: p["verdicts"][0].update(step_seq=99999), "names step 99999"),
    (lambda p: p["steps"][0].update(kind="no_such_kind"), "not an event"),
    (lambda p: p["steps"][1].update(seq=p["steps"][0]["seq"]), "appears twice"),
    (lambda p: p["investigation"].update(question="x" * 100_000), "question has 100,000"),
    (lambda p: p["investigation"].update(status="running"), "still running"),
    (lambda p: p["investigation"].update(created_at="yesterday"), "not a date"),
    (lambda p: p["notes"].append({"document_key": "a:b", "text": "n\x00", "user": None,
                                  "created_at": "2026-01-01T00:00:00+00:00"}), "NUL"),
    (lambda p: p["notes"].append({"document_key": "a:b", "text": "n" * 3000, "user": None,
                                  "created_at": "2026-01-01T00:00:00+00:00"}), "3,000 char"),
    (lambda p: p["answer_drafts"].append({**p["answer_drafts"][0], "sections": [{"x": 1}]}),
     "not a drafted answer"),
    (lambda p: p["verdicts"][0].update(owner=1), "unknown field 'owner'"),
    (lambda p: p.pop("steps"), "'steps' is missing"),
    (lambda p: p["investigation"].update(gold_keys="a:b"), "gold_keys: not a list"),
    (lambda p: p["sub_questions"].append(p["sub_questions"][0]), "contradict each other"),
    (lambda p: next(s for s in p["steps"] if s["kind"] == "verdict")["payload"].update(
        evidence=[1]), "not an event"),
])
def test_a_resealed_file_with_bad_fields_is_refused(users, finished, edit, reason):
    envelope = _envelope(investigation_file(_worked_on(finished, users["alice"])))
    edit(envelope["payload"])
    _refused(users, _resealed(envelope), reason)


def test_the_commands_move_an_investigation(users, finished, tmp_path, capsys):
    path = tmp_path / "run.trace.json"
    call_command("export_investigation", str(finished.pk), "--out", str(path))
    call_command("import_investigation", str(path), "--owner", "bob")
    out = capsys.readouterr().out
    assert "Imported as investigation" in out
    copy = Investigation.objects.exclude(pk=finished.pk).get(owner=users["bob"])
    assert copy.ranked_keys == finished.ranked_keys
    path.write_text(path.read_text().replace(finished.question, "Autre question"))
    with pytest.raises(CommandError, match="nothing was written"):
        call_command("import_investigation", str(path), "--owner", "bob")


def test_the_review_page_downloads_and_the_import_page_uploads(client, users, finished):
    client.force_login(users["alice"])
    review = client.get(f"/investigations/{finished.pk}/review/").content.decode()
    assert f"/investigations/{finished.pk}/file/" in review
    response = client.get(f"/investigations/{finished.pk}/file/")
    assert response.status_code == 200
    assert "attachment" in response["Content-Disposition"]
    data = response.content
    client.force_login(users["eve"])
    assert client.get(f"/investigations/{finished.pk}/file/").status_code == 404
    from django.core.files.uploadedfile import SimpleUploadedFile

    bad = client.post("/investigations/import/", {
        "file": SimpleUploadedFile("x.json", data.replace(b"offline", b"offlin3", 1))})
    assert bad.status_code == 400
    assert "nothing was written" in bad.content.decode()
    good = client.post("/investigations/import/", {"file": SimpleUploadedFile("x.json", data)})
    assert good.status_code == 302
    imported = Investigation.objects.get(owner=users["eve"])
    assert good["Location"] == f"/investigations/{imported.pk}/review/"
