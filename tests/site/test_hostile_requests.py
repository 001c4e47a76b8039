"""Malformed requests of every kind are a 4xx answered by Django, never a 500 or a traceback.

The walk over every URL pattern sends, from an anonymous client and a logged-in one, each with a
made-up well-formed CSRF cookie and Django's CSRF check on: form bodies declared in other charsets,
bodies and query strings that are not UTF-8, a malformed Content-Length.
"""

from __future__ import annotations

import logging
import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver

from agent.models import Batch, DocumentNote
from archive.field_limits import FieldTooLong

pytestmark = pytest.mark.django_db

MADE_UP_CSRF = "A" * 32  # well formed: 32 characters of the token alphabet
# (what is sent, the content type) of each hostile body.
HOSTILE_BODIES = {
    "utf-16 form": ("question=x&document=y".encode("utf-16"),
                    "application/x-www-form-urlencoded; charset=utf-16"),
    "latin-1 form": ("question=caf\xe9".encode("latin-1"),
                     "application/x-www-form-urlencoded; charset=latin-1"),
    "unknown charset": (b"question=x", "application/x-www-form-urlencoded; charset=x-nothing"),
    "bytes not utf-8": (b"question=%FF%FE&note=\xff", "application/x-www-form-urlencoded"),
    "multipart not utf-8": (b"--b\r\nContent-Disposition: form-data; name=\"note\"\r\n\r\n"
                            b"\xff\xfe\r\n--b--\r\n", "multipart/form-data; boundary=b"),
    "multipart without boundary": (b"x", "multipart/form-data"),
    "multipart latin-1": (b"--b\r\nContent-Disposition: form-data; name=\"note\"\r\n\r\n"
                          b"\xe9\r\n--b--\r\n", "multipart/form-data; boundary=b; charset=latin-1"),
}


def _routes(resolver: URLResolver, prefix: str = "") -> list[str]:
    found = []
    for entry in resolver.url_patterns:
        route = prefix + str(entry.pattern)
        if isinstance(entry, URLResolver):
            found.extend(_routes(entry, route))
        elif isinstance(entry, URLPattern) and not route.startswith("^") and "(?P<" not in route:
            found.append(route)
    return found


def _path(route: str, pk: int) -> str:
    return "/" + re.sub(r"<(?:int:)?pk>", str(pk), re.sub(r"<str:\w+>", "csv",
                                                          re.sub(r"<slug:\w+>", "x", route)))


def _tracebacks(caplog) -> list[str]:
    return [record.getMessage() for record in caplog.records
            if record.exc_info or record.levelno >= logging.ERROR]


def _client(user=None) -> Client:
    client = Client(enforce_csrf_checks=True)
    client.cookies["csrftoken"] = MADE_UP_CSRF
    if user is not None:
        client.force_login(user)
    return client


@pytest.mark.parametrize("logged_in", [False, True], ids=["anonymous", "logged-in"])
def test_every_route_answers_hostile_bodies_with_a_4xx_and_no_traceback(users, finished, caplog,
                                                                        logged_in):
    routes = _routes(get_resolver())
    assert len(routes) > 20
    caplog.set_level(logging.WARNING)
    seen = set()
    for route in routes:
        client = _client(users["alice"] if logged_in else None)
        path = _path(route, finished.pk)
        for kind, (body, content_type) in HOSTILE_BODIES.items():
            response = client.generic("POST", path, body, content_type=content_type)
            assert 400 <= response.status_code < 500, (kind, route, response.status_code)
            seen.add(response.status_code)
        response = client.get(path + "?q=%FF%FE")
        assert response.status_code == 400, route
        response = client.generic("POST", path, b"a=b", CONTENT_LENGTH="abc",
                                  content_type="application/x-www-form-urlencoded")
        assert response.status_code == 400, route
    assert seen == {400}  # refused by the gate, before the CSRF check (a 403) or any view
    assert _tracebacks(caplog) == []


def test_a_form_in_another_charset_is_refused_with_its_reason(client):
    client.cookies["csrftoken"] = MADE_UP_CSRF
    response = Client(enforce_csrf_checks=True).generic(
        "POST", "/accounts/login/", "username=bob".encode("utf-16"),
        content_type="application/x-www-form-urlencoded; charset=utf-16")
    assert response.status_code == 400
    assert "charset 'utf-16'; this site reads forms in UTF-8 only" in response.content.decode()


def test_bytes_not_utf8_in_a_query_or_form_are_refused_not_replaced(client, users, finished):
    client.force_login(users["alice"])
    key = finished.ranked_keys[0]
    response = client.get("/search/?q=caf%E9")
    assert response.status_code == 400
    assert "The query string holds bytes that are not UTF-8" in response.content.decode()
    response = client.post(f"/investigations/{finished.pk}/note/",
                           f"document={key}&note=caf%E9",
                           content_type="application/x-www-form-urlencoded")
    assert response.status_code == 400
    assert "The form holds bytes that are not UTF-8" in response.content.decode()
    assert not DocumentNote.objects.exists()
    # A well-encoded é and a real U+FFFD sent as UTF-8 are kept as written.
    response = client.post(f"/investigations/{finished.pk}/note/",
                           f"document={key}&note=caf%C3%A9+%EF%BF%BD",
                           content_type="application/x-www-form-urlencoded")
    assert response.status_code == 302
    assert DocumentNote.objects.get().text == "café \ufffd"


def test_unicode_digits_in_a_form_number_are_not_read_as_digits(client, users, tiny_archive):
    client.force_login(users["alice"])
    page = client.get("/search/?q=Lejeune&cap=٣").content.decode()
    assert "Write numbers with the digits 0-9." in page
    page = client.get("/search/?q=Lejeune&date_from=١٨٨٧-٠١-٠١").content.decode()
    assert "Write numbers with the digits 0-9." in page
    page = client.get("/search/?q=Lejeune&cap=3").content.decode()
    assert "Write numbers with the digits 0-9." not in page


@pytest.mark.parametrize("digits", [19, 40])
def test_a_path_id_longer_than_any_id_is_a_400(client, users, digits):
    client.force_login(users["alice"])
    for path in (f"/investigations/{'9' * digits}/", f"/archive/documents/{'9' * digits}/",
                 f"/investigations/batches/{'9' * digits}/"):
        response = client.get(path)
        assert response.status_code == 400, path
        assert "more than 18 digits" in response.content.decode()
    assert client.get(f"/investigations/{'9' * 18}/").status_code == 404


def test_a_note_is_bounded_by_its_field_and_kept_only_for_a_source_of_the_run(client, users,
                                                                              finished):
    client.force_login(users["alice"])
    url = f"/investigations/{finished.pk}/note/"
    for document in ("k" * 401, "", "legaulois_1887_v1:never-seen"):
        response = client.post(url, {"document": document, "note": "a note"})
        assert response.status_code == 400, document
        assert "no verdict in this investigation" in response.content.decode()
    assert not DocumentNote.objects.exists()
    response = client.post(url, {"document": finished.ranked_keys[0], "note": "a note"})
    assert response.status_code == 302 and DocumentNote.objects.count() == 1


def test_a_batch_named_after_a_long_file_name_fits_its_column(client, users):
    client.force_login(users["alice"])
    name = "q" * 236 + ".csv"
    response = client.post("/investigations/batches/new/", {
        "name": "", "file": SimpleUploadedFile(name, b"question\nQui parle du budget ?\n")})
    assert response.status_code == 302
    assert Batch.objects.get().name == name[:200]


def test_every_row_is_checked_against_its_columns_before_it_is_written(users, finished):
    with pytest.raises(FieldTooLong, match="has 401 characters; at most 400"):
        DocumentNote.objects.create(investigation=finished, user=users["alice"],
                                    document_key="k" * 401, text="n")
    assert not DocumentNote.objects.exists()


def test_the_400_page_says_why_and_reads_nothing_of_the_request():
    from django.test import RequestFactory

    from trace_site.views import bad_request

    request = RequestFactory().generic(
        "POST", "/", "a=b".encode("utf-16"),
        content_type="application/x-www-form-urlencoded; charset=utf-16")
    response = bad_request(request, FieldTooLong("The name has 201 characters; at most 200."))
    assert response.status_code == 400
    assert response.content.decode() == (
        "Bad request: The name has 201 characters; at most 200.\n")
    assert not hasattr(request, "_post")  # the body was never parsed


def test_every_admin_page_answers_any_to_field_without_a_500(client, users, finished, caplog):
    from django.contrib import admin
    from django.contrib.auth import get_user_model

    staff = get_user_model().objects.create_superuser("root", password="root-password-1")
    client.force_login(staff)
    caplog.set_level(logging.WARNING)
    pages = 0
    for model in admin.site._registry:
        base = f"/admin/{model._meta.app_label}/{model._meta.model_name}/"
        row = model.objects.first()
        paths = [base, f"{base}add/"] + ([f"{base}{row.pk}/change/", f"{base}{row.pk}/delete/",
                                          f"{base}{row.pk}/history/"] if row else [])
        for path in paths:
            pages += 1
            for value in ("", "x", "pk", "id", "username", "\u00e9"):
                response = client.get(path, {"_to_field": value})
                assert response.status_code < 500, (path, value)
                if value == "":
                    assert response.status_code == 400, path
    assert pages >= 5


def test_a_host_header_not_allowed_is_a_400_without_a_traceback(client, caplog):
    caplog.set_level(logging.WARNING)
    response = client.get("/accounts/login/", HTTP_HOST="evil.example\x01")
    assert response.status_code == 400
    assert caplog.records and not any(record.exc_info for record in caplog.records)


def _record(status: int) -> logging.LogRecord:
    try:
        raise RuntimeError("boom")
    except RuntimeError:
        import sys

        info = sys.exc_info()
    record = logging.LogRecord("django.request", logging.WARNING, __file__, 1, "refused", None,
                               info)
    record.status_code = status
    return record


def test_a_refusal_is_logged_on_one_line_and_a_crash_keeps_its_traceback():
    """The console handler's filter: Django hands a 4xx it answered itself over with the
    exception's traceback (a BadRequest raised outside a view); the log keeps one line."""
    from trace_site.log_filters import RefusalsOnOneLine

    refused, crashed = _record(400), _record(500)
    assert RefusalsOnOneLine().filter(refused) and RefusalsOnOneLine().filter(crashed)
    assert refused.exc_info is None
    assert crashed.exc_info is not None
