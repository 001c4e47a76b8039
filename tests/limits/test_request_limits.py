"""Limits on what a user sends: oversized bodies, long or NUL-laden fields never create anything."""

from __future__ import annotations

import json
import re
import time

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from agent.investigations import services
from agent.investigations.batches import BatchFileError, parse_batch_file
from agent.models import Batch, Investigation

pytestmark = pytest.mark.django_db

TEN_MB_QUESTION = "Qui a parlé du budget ? " * (10_000_000 // 24)


@pytest.fixture
def alice(client, users):
    client.force_login(users["alice"])
    return users["alice"]


def _nothing_created() -> bool:
    return not Investigation.objects.exists() and not Batch.objects.exists()


def test_a_10_mb_question_from_the_ask_form_is_refused_fast(client, alice):
    started = time.perf_counter()
    response = client.post("/investigations/new/", {"question": TEN_MB_QUESTION})
    elapsed = time.perf_counter() - started
    assert response.status_code == 413
    assert re.match(r"The request is too large: 1\d\.\d MB sent, at most 5\.0 MB accepted",
                    response.content.decode())
    assert elapsed < 1.0
    assert _nothing_created()


def test_a_10_mb_question_in_a_batch_file_is_refused_fast(client, alice):
    payload = json.dumps({"qid": "q1", "question": TEN_MB_QUESTION}).encode()
    started = time.perf_counter()
    response = client.post("/investigations/batches/new/",
                           {"file": SimpleUploadedFile("q.jsonl", payload)})
    elapsed = time.perf_counter() - started
    assert response.status_code == 413 and elapsed < 1.0
    assert _nothing_created()


def test_a_question_over_the_limit_under_the_body_cap_is_a_form_error(client, alice, settings):
    question = "x" * (settings.TRACE_MAX_QUESTION_CHARS + 1)
    lines = [json.dumps({"question": "Une question ?"}), json.dumps({"question": question})]
    response = client.post("/investigations/batches/new/",
                           {"file": SimpleUploadedFile("q.jsonl", "\n".join(lines).encode())})
    page = response.content.decode()
    assert response.status_code == 200
    assert "Line 2: the question has 2,001 characters; at most 2,000." in page
    response = client.post("/investigations/new/", {"question": question})
    assert response.status_code == 200 and "errorlist" in response.content.decode()
    assert _nothing_created()


def test_the_service_layer_refuses_what_every_entry_point_refuses(alice, settings):
    too_long = "x" * (settings.TRACE_MAX_QUESTION_CHARS + 1)
    for kwargs, message in [
        ({"question": too_long}, "The question has 2,001 characters; at most 2,000."),
        ({"question": "Une ?", "qid": "q" * 300}, "The qid has 300 characters; at most 200."),
        ({"question": "Une\x00 ?"}, "The question contains a NUL character"),
        ({"question": "Une ?", "gold_keys": ["a:\x00"]}, "A gold id contains a NUL character"),
    ]:
        with pytest.raises(services.InvestigationError, match=message.replace("?", r"\?")):
            services.investigation_create(owner=alice, enqueue=False, **kwargs)
    assert _nothing_created()


@pytest.mark.parametrize("line,problem", [
    ({"question": "Une ?", "qid": "q" * 300}, "Line 1: the qid has 300 characters; at most 200."),
    ({"question": "Une\u0000 ?"}, "Line 1: the question contains a NUL character"),
    ({"question": "Une ?", "qid": "q\u0000"}, "Line 1: the qid contains a NUL character"),
    ({"question": "Une ?", "question_type": "t" * 101}, "the question_type has 101 characters"),
    ({"question": "Une ?", "gold_ids": ["k" * 401]}, "a gold id has 401 characters"),
])
def test_batch_rows_with_bad_fields_name_the_line(line, problem):
    with pytest.raises(BatchFileError, match=problem.replace("?", r"\?")):
        parse_batch_file("q.jsonl", json.dumps(line).encode())


def test_batch_files_cap_rows_and_size_and_read_csv_safely(settings):
    settings.TRACE_MAX_BATCH_QUESTIONS = 3
    rows = "\n".join(json.dumps({"question": f"Q{i} ?"}) for i in range(4)).encode()
    with pytest.raises(BatchFileError, match=r"At most 3 questions per batch \(line 4"):
        parse_batch_file("q.jsonl", rows)
    settings.TRACE_MAX_UPLOAD_BYTES = 100
    with pytest.raises(BatchFileError, match="The file is too large"):
        parse_batch_file("q.jsonl", b" " * 101)
    settings.TRACE_MAX_UPLOAD_BYTES = 4_000_000
    huge_cell = b"question\n" + b"a" * 200_000 + b"\n"
    with pytest.raises(BatchFileError, match="Line 2"):
        parse_batch_file("q.csv", huge_cell)
    separated = json.dumps({"question": "Une\u2028question ?"}, ensure_ascii=False).encode()
    assert parse_batch_file("q.jsonl", separated)[0].question == "Une\u2028question ?"


@pytest.mark.parametrize("path", [
    "/investigations/?q=bud%00get", "/investigations/?status=run%00ning",
    "/search/?q=budget%00", "/archive/legaulois_1887_v1/?from=1887%00",
])
def test_a_nul_in_a_query_parameter_is_a_clear_400(client, alice, path):
    response = client.get(path)
    assert response.status_code == 400
    assert "contains a NUL character" in response.content.decode()


def test_a_nul_in_doc_and_in_a_posted_batch_is_a_clear_400(client, alice, tiny_archive):
    investigation = services.investigation_create(owner=alice, question="Une ?", enqueue=False)
    response = client.get(f"/investigations/{investigation.pk}/source/?doc=a%00b")
    assert response.status_code == 400
    response = client.post("/investigations/batches/new/", {
        "name": "lot\x00", "file": SimpleUploadedFile("q.jsonl", b'{"question": "Une ?"}')})
    assert response.status_code == 400
    assert Investigation.objects.count() == 1 and not Batch.objects.exists()


def test_an_overlong_query_parameter_is_refused(client, alice, settings):
    response = client.get("/search/", {"q": "mot " * settings.TRACE_MAX_PARAM_CHARS})
    assert response.status_code == 400 and "at most 2,000" in response.content.decode()


def test_a_10_mb_investigation_file_is_refused_fast(client, alice):
    payload = json.dumps({"format": "trace-investigation", "padding": TEN_MB_QUESTION}).encode()
    started = time.perf_counter()
    response = client.post("/investigations/import/",
                           {"file": SimpleUploadedFile("run.trace.json", payload)})
    elapsed = time.perf_counter() - started
    assert response.status_code == 413 and elapsed < 1.0
    assert _nothing_created()


def test_a_10_mb_ocr_correction_is_refused_fast(client, alice, tiny_archive):
    from archive.models import Chunk, ChunkCorrection

    chunk = Chunk.objects.order_by("pk").first()
    started = time.perf_counter()
    response = client.post(f"/archive/chunks/{chunk.pk}/correct/", {"text": TEN_MB_QUESTION})
    elapsed = time.perf_counter() - started
    assert response.status_code == 413 and elapsed < 1.0
    assert not ChunkCorrection.objects.exists()
    assert Chunk.objects.get(pk=chunk.pk).text == chunk.text


@pytest.mark.parametrize("payload", [b'question\n"Qui a dit\nrien ?\nAutre question\n',
                                     b'question\n"Qui a dit" rien\n'])
def test_a_batch_csv_with_an_unterminated_or_stray_quote_is_refused(payload):
    with pytest.raises(BatchFileError, match=r"unreadable CSV"):
        parse_batch_file("q.csv", payload)


def test_a_batch_csv_with_quoted_lines_still_reads():
    rows = parse_batch_file("q.csv", b'question\n"Qui a dit, en 1887,\n""rien"" ?"\n')
    assert [row.question for row in rows] == ['Qui a dit, en 1887,\n"rien" ?']
