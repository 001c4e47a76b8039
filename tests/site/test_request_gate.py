"""One gate for request input: hostile paths, parameters, fields and cookies never give a 500."""

from __future__ import annotations

import pytest
from django.urls import URLPattern, URLResolver, get_resolver

from agent.models import Batch, DocumentNote, Verdict
from agent.review import services as review_services
from archive.models import Document

pytestmark = pytest.mark.django_db

NOTE_LIMIT = 2000

# Each kind of hostile value, as the client writes it into a URL (percent-encoded) or a form.
HOSTILE = {
    "nul": "a\x00b",
    "unicode digits": "²",
    "arabic-indic digit": "٣",
    "unicode span": "²-³",
    "negative": "-1",
    "huge number": "9" * 40,
    "huge text": "x" * 5000,
    "invalid utf-8": "\udcff",  # sent as the raw byte 0xFF (see _encoded)
}
# Every query parameter and form field a view of this site reads.
QUERY_NAMES = ["q", "status", "token", "after", "doc", "chunk", "evidence", "from", "to", "start",
               "end", "page", "channel", "sub_corpus", "date_from", "date_to", "moved",
               "direction", "share", "next", "draft", "a", "b", "ta", "tb", "selection"]
FORM_NAMES = ["question", "sub_corpus", "date_from", "date_to", "document", "decision", "note",
              "direction", "order", "enable", "name", "username", "password", "next", "policy",
              "agent_model", "m_max", "step_budget", "search_limit", "warm_start_limit",
              "held_pool_size"]
COOKIE_NAMES = ["sessionid", "csrftoken"]


def _encoded(value: str) -> str:
    """Percent-encode a value for a URL, a lone surrogate standing for the raw byte 0xFF."""
    from urllib.parse import quote

    return quote(value.replace("\udcff", "\xff"), safe="", encoding="latin-1",
                 errors="strict") if "\udcff" in value else quote(value, safe="")


def _patterns(resolver: URLResolver, prefix: str = "") -> list[tuple[str, list[str]]]:
    """List every route as its pieces: literal text and `<converter:name>` placeholders."""
    import re

    found = []
    for entry in resolver.url_patterns:
        route = prefix + str(entry.pattern)
        if isinstance(entry, URLResolver):
            found.extend(_patterns(entry, route))
        elif isinstance(entry, URLPattern):
            found.append((route, re.split(r"(<[^>]+>)", route)))
    return found


ROUTES = _patterns(get_resolver())


def _is_regex(route: str) -> bool:
    return route.startswith("^") or "(?P<" in route or route.endswith("$")


def _path(pieces: list[str], values: dict[str, str]) -> str:
    """Fill a route's placeholders, each from `values` by converter or a default."""
    out = []
    for piece in pieces:
        if piece.startswith("<"):
            converter = piece[1:-1].split(":")[0] if ":" in piece else "str"
            out.append(values.get(piece, values.get(converter, "1")))
        else:
            out.append(piece)
    return "/" + "".join(out)


@pytest.fixture
def real_ids(users, finished):
    """Real primary keys, so that hostile values reach the views behind the converters."""
    batch = Batch.objects.create(owner=users["alice"], name="lot")
    return {"int": str(finished.pk), "<int:pk>": str(finished.pk), "str": "csv",
            "<str:fmt>": "csv", "<str:slug>": "legaulois_1887_v1", "batch": str(batch.pk),
            "document": str(Document.objects.first().pk)}


def _route_values(route: str, real_ids: dict[str, str]) -> dict[str, str]:
    values = dict(real_ids)
    if route.startswith("investigations/batches/"):
        values["<int:pk>"] = real_ids["batch"]
    if route.startswith("archive/documents/"):
        values["<int:pk>"] = real_ids["document"]
    return values


def _assert_no_500(response, what: str) -> None:
    # /healthz answers 503 when no worker runs, which is its job; a 500 is a crash.
    assert response.status_code != 500, what


def _probe_each(client, method: str, path: str, names: list[str], encoded: str,
                what: str) -> None:
    """Send every name at once; on a 400 (a view stopped at one), send each name alone."""
    def send(chosen: list[str]):
        query = "&".join(f"{name}={encoded}" for name in chosen)
        if method == "get":
            return client.get(f"{path}?{query}")
        return client.post(path, query, content_type="application/x-www-form-urlencoded")

    response = send(names)
    _assert_no_500(response, what % ",".join(names))
    if response.status_code == 400:
        for name in names:
            _assert_no_500(send([name]), what % name)


@pytest.mark.parametrize("logged_in", [False, True], ids=["anonymous", "logged-in"])
def test_every_route_survives_hostile_values_everywhere(client, users, real_ids, logged_in,
                                                        caplog):
    """Walk every URL pattern: hostile path segments, query parameters, form fields, cookies;
    from an anonymous client and a logged-in one. No 500, and no traceback in the log."""
    import logging

    caplog.set_level(logging.WARNING)
    routes = [(route, pieces) for route, pieces in ROUTES if not _is_regex(route)]
    assert len(routes) > 20  # the walk saw the site's own routes, not an empty resolver
    for route, pieces in routes:
        if logged_in:  # again for each route: posting to the log-out page ends the session
            client.force_login(users["alice"])
        values = _route_values(route, real_ids)
        good = _path(pieces, values)
        placeholders = [p for p in pieces if p.startswith("<")]
        for kind, hostile in HOSTILE.items():
            encoded = _encoded(hostile)
            for placeholder in placeholders:
                path = _path(pieces, {**values, placeholder: encoded})
                _assert_no_500(client.get(path), f"{kind} in {placeholder} of {route}")
            if route.startswith("admin/"):
                continue  # the admin reads no parameter of ours; its segments are walked above
            _probe_each(client, "get", good, QUERY_NAMES, encoded, f"{kind} in ?%s of {route}")
            _probe_each(client, "post", good, FORM_NAMES, encoded,
                        f"{kind} in form field %s of {route}")
        for name in COOKIE_NAMES:
            for kind, hostile in HOSTILE.items():
                # Long enough to be looked up: a session key under 8 characters is ignored.
                raw = "s" * 32 + hostile.replace("\udcff", "\xff")
                response = client.get(good, HTTP_COOKIE=f"{name}={raw}")
                _assert_no_500(response, f"{kind} in cookie {name} of {route}")
    tracebacks = [record.getMessage() for record in caplog.records
                  if record.exc_info and record.name != "django.security.DisallowedHost"]
    assert tracebacks == []


def test_a_nul_in_the_archive_path_is_a_400_before_login(client):
    response = client.get("/archive/%00/")
    assert response.status_code == 400
    assert "The address contains a NUL character" in response.content.decode()


@pytest.mark.parametrize("path", ["/", "/accounts/login/", "/archive/"])
def test_a_nul_in_the_session_cookie_is_a_400_on_every_page(client, path):
    response = client.get(path, HTTP_COOKIE="sessionid=abc\x00def")
    assert response.status_code == 400
    assert "The cookie 'sessionid' contains a NUL character" in response.content.decode()


@pytest.mark.parametrize("query", ["evidence=²-³", "chunk=²", "from=-1", "from=²", "start=-1&end=4",
                                   "chunk=99999999999999999999999", "evidence=3", "evidence=9-2"])
def test_malformed_numbers_in_the_document_viewer_are_a_400(client, users, tiny_archive, query):
    client.force_login(users["alice"])
    document = Document.objects.first()
    response = client.get(f"/archive/documents/{document.pk}/?{query}")
    assert response.status_code == 400, query


def test_well_formed_numbers_in_the_document_viewer_still_work(client, users, tiny_archive):
    client.force_login(users["alice"])
    document = Document.objects.first()
    response = client.get(f"/archive/documents/{document.pk}/?evidence=0-5&from=7&chunk=1")
    assert response.status_code == 200
    assert 'id="highlight"' in response.content.decode()


@pytest.mark.parametrize("query", ["chunk=²", "evidence=²-³", "chunk=-1", "evidence=a-b"])
def test_malformed_numbers_when_opening_a_source_are_a_400(client, users, finished, query):
    client.force_login(users["alice"])
    key = finished.ranked_keys[0]
    response = client.get(f"/investigations/{finished.pk}/source/?doc={key}&{query}")
    assert response.status_code == 400, query


@pytest.mark.parametrize("after", ["²", "-1", "abc"])
def test_a_malformed_step_cursor_is_a_400(client, users, finished, after):
    client.force_login(users["alice"])
    response = client.get(f"/investigations/{finished.pk}/steps/?after={after}")
    assert response.status_code == 400


def test_notes_and_override_reasons_are_bounded_on_the_server(client, users, finished):
    client.force_login(users["alice"])
    key = finished.ranked_keys[0]
    verdicts_before = Verdict.objects.count()
    too_long = "n" * (NOTE_LIMIT + 1)
    response = client.post(f"/investigations/{finished.pk}/note/",
                           {"document": key, "note": too_long})
    assert response.status_code == 400
    assert "The note has 2,001 characters; at most 2,000" in response.content.decode()
    response = client.post(f"/investigations/{finished.pk}/override/",
                           {"document": key, "decision": "reject", "note": too_long})
    assert response.status_code == 400
    assert "The reason has 2,001 characters; at most 2,000" in response.content.decode()
    assert not DocumentNote.objects.exists() and Verdict.objects.count() == verdicts_before
    review_services.note_add(investigation=finished, user=users["alice"], document_key=key,
                      note="n" * NOTE_LIMIT)
    assert DocumentNote.objects.get().text == "n" * NOTE_LIMIT


def test_a_refused_long_question_is_not_echoed_back_whole(client, users, tiny_archive):
    client.force_login(users["alice"])
    question = "budget " * 100_000  # 700,000 characters: under the 1 MB form cap
    response = client.post("/investigations/new/", {"question": question})
    page = response.content.decode()
    assert response.status_code == 200 and "errorlist" in page
    assert len(page) < 100_000
