"""Web hardening: a strict CSP, no caching of private pages, throttled log-ins, safe links."""

from __future__ import annotations

import uuid

import pytest
from django.contrib.auth import get_user_model
from django.template import Context, Template

from archive.models import Document
from common.links import link_target

HOSTILE_URLS = ["javascript:alert(1)", "  JavaScript:alert(1)", "\tjava\nscript:alert(1)",
                "JAVASCRIPT:alert(document.cookie)", "data:text/html,<script>alert(1)</script>",
                "vbscript:msgbox(1)", "//evil.example/x", "\x01javascript:alert(1)"]


def directives(response) -> dict[str, list[str]]:
    policy = response["Content-Security-Policy"]
    return {part.split()[0]: part.split()[1:] for part in policy.split(";") if part.strip()}


@pytest.mark.django_db
@pytest.mark.parametrize("path", ["/accounts/login/", "/healthz"])
def test_public_responses_carry_a_strict_csp(client, path):
    csp = directives(client.get(path))
    assert csp["default-src"] == ["'self'"]
    assert csp["script-src"] == ["'self'"] and csp["style-src"] == ["'self'"]
    assert csp["object-src"] == ["'none'"] and csp["frame-ancestors"] == ["'none'"]


def test_private_pages_carry_the_csp_and_are_never_stored(client, users, finished):
    client.force_login(users["alice"])
    key = finished.ranked_keys[0]
    for path in ["/investigations/", f"/investigations/{finished.pk}/",
                 f"/investigations/{finished.pk}/review/",
                 f"/investigations/{finished.pk}/evidence/?doc={key}",
                 f"/investigations/{finished.pk}/export/csv/", "/archive/", "/search/?q=Lejeune"]:
        response = client.get(path)
        assert response.status_code == 200, path
        assert "'unsafe-inline'" not in response["Content-Security-Policy"], path
        cache_control = response["Cache-Control"]
        assert "no-store" in cache_control and "private" in cache_control, (path, cache_control)


@pytest.mark.parametrize("address", HOSTILE_URLS)
def test_hostile_addresses_never_become_links(address):
    assert link_target(address) is None
    rendered = Template("{% load safe_links %}[{{ url|safe_url }}]").render(
        Context({"url": address}))
    assert rendered == "[]"


@pytest.mark.parametrize(("address", "target"), [
    ("https://gallica.bnf.fr/ark:/12148/bpt6k5", "https://gallica.bnf.fr/ark:/12148/bpt6k5"),
    (" http://example.org/a ", "http://example.org/a"),
    ("ark:/12148/bpt6k7", "https://n2t.net/ark:/12148/bpt6k7"),
    ("doi:10.1000/182", "https://doi.org/10.1000/182"),
])
def test_http_ark_and_doi_addresses_link_to_http(address, target):
    assert link_target(address) == target


@pytest.mark.parametrize("address", ["javascript:alert(1)", "  JaVaScRiPt:alert(1)"])
def test_a_javascript_document_url_is_text_in_the_viewer_and_the_evidence_page(
        client, users, finished, address):
    key = finished.ranked_keys[0]
    document = Document.objects.get(sub_corpus__slug=key.split(":")[0],
                                    external_id=key.split(":", 1)[1])
    Document.objects.filter(pk=document.pk).update(url=address)
    client.force_login(users["alice"])
    for path in [f"/archive/documents/{document.pk}/",
                 f"/investigations/{finished.pk}/evidence/?doc={key}"]:
        page = client.get(path).content.decode()
        assert "alert(1)" in page, path  # shown, as text
        assert 'href="javascript' not in page.lower().replace(" ", ""), path
        assert "href=\"  javascript" not in page.lower(), path


def test_a_safe_document_url_is_a_link(client, users, finished):
    key = finished.ranked_keys[0]
    document = Document.objects.get(sub_corpus__slug=key.split(":")[0],
                                    external_id=key.split(":", 1)[1])
    Document.objects.filter(pk=document.pk).update(url="ark:/12148/bpt6k1")
    client.force_login(users["alice"])
    page = client.get(f"/archive/documents/{document.pk}/").content.decode()
    assert 'href="https://n2t.net/ark:/12148/bpt6k1"' in page


def _log_in(client, username, password, address):
    return client.post("/accounts/login/", {"username": username, "password": password},
                       REMOTE_ADDR=address)


@pytest.mark.django_db
def test_failed_log_ins_are_throttled_per_username_and_address(client, settings):
    settings.TRACE_LOGIN_MAX_FAILURES = 3
    username = f"throttled-{uuid.uuid4().hex[:8]}"
    get_user_model().objects.create_user(username=username, password="Right-password-1")
    address = f"10.{uuid.uuid4().int % 250}.{uuid.uuid4().int % 250}.7"
    for _ in range(3):
        response = _log_in(client, username, "wrong", address)
        assert response.status_code == 200  # the form again, with its error
    refused = _log_in(client, username, "Right-password-1", address)
    assert refused.status_code == 429  # even the right password waits for the window
    assert "Too many failed log-ins" in refused.content.decode()
    assert int(refused["Retry-After"]) == settings.TRACE_LOGIN_WINDOW_SECONDS
    assert "_auth_user_id" not in client.session
    # Another address is not punished for this one.
    other = _log_in(client, username, "Right-password-1", "192.0.2.99")
    assert other.status_code == 302


@pytest.mark.django_db
def test_a_successful_log_in_clears_the_count(client, settings):
    settings.TRACE_LOGIN_MAX_FAILURES = 3
    username = f"forgiven-{uuid.uuid4().hex[:8]}"
    get_user_model().objects.create_user(username=username, password="Right-password-1")
    address = f"10.{uuid.uuid4().int % 250}.{uuid.uuid4().int % 250}.8"
    for _ in range(2):
        _log_in(client, username, "wrong", address)
    assert _log_in(client, username, "Right-password-1", address).status_code == 302
    client.logout()
    for _ in range(2):
        assert _log_in(client, username, "wrong", address).status_code == 200
    assert _log_in(client, username, "Right-password-1", address).status_code == 302


@pytest.mark.django_db
def test_log_in_still_works_when_the_throttle_cache_is_down(client, settings, tmp_path):
    import time

    settings.CACHES = {**settings.CACHES, "throttle": {
        **settings.CACHES["throttle"], "LOCATION": f"unix://{tmp_path / 'absent.sock'}?db=0"}}
    # A cheap hasher: the time measured is the throttle's with its cache down, not the password
    # hash's, which alone can take over a second on a busy two-core host.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    username = f"nocache-{uuid.uuid4().hex[:8]}"
    get_user_model().objects.create_user(username=username, password="Right-password-1")
    started = time.monotonic()
    assert _log_in(client, username, "wrong", "10.9.9.9").status_code == 200
    assert _log_in(client, username, "Right-password-1", "10.9.9.9").status_code == 302
    assert time.monotonic() - started < 2.0


@pytest.mark.django_db
@pytest.mark.parametrize("spelling", ["ｂｏｂ", " bob ", "BOB", "ᵇᵒᵇ"])
def test_a_blocked_username_stays_blocked_in_its_compatibility_forms(client, settings, spelling):
    """The throttle counts the name the form authenticates (NFKC, stripped), not the raw one."""
    settings.TRACE_LOGIN_MAX_FAILURES = 3
    get_user_model().objects.create_user(username="bob", password="Right-password-1")
    address = f"10.{uuid.uuid4().int % 250}.{uuid.uuid4().int % 250}.9"
    for _ in range(3):
        assert _log_in(client, "bob", "wrong", address).status_code == 200
    refused = _log_in(client, spelling, "wrong", address)
    assert refused.status_code == 429, spelling


@pytest.mark.django_db
def test_the_right_password_under_another_spelling_neither_logs_in_nor_clears_the_count(
        client, settings):
    settings.TRACE_LOGIN_MAX_FAILURES = 3
    get_user_model().objects.create_user(username="carol", password="Right-password-1")
    address = f"10.{uuid.uuid4().int % 250}.{uuid.uuid4().int % 250}.10"
    for _ in range(3):
        _log_in(client, "carol", "wrong", address)
    # The full-width spelling is carol to Django's authentication: it must wait too.
    assert _log_in(client, "ｃａｒｏｌ", "Right-password-1", address).status_code == 429
    assert "_auth_user_id" not in client.session
    assert _log_in(client, "carol", "Right-password-1", address).status_code == 429


@pytest.mark.django_db
def test_an_ipv4_address_mapped_into_ipv6_shares_its_count(client, settings):
    settings.TRACE_LOGIN_MAX_FAILURES = 3
    get_user_model().objects.create_user(username="dave", password="Right-password-1")
    octets = f"{uuid.uuid4().int % 250}.{uuid.uuid4().int % 250}"
    for _ in range(3):
        _log_in(client, "dave", "wrong", f"10.{octets}.11")
    assert _log_in(client, "dave", "wrong", f"::ffff:10.{octets}.11").status_code == 429
