"""Behind the proxy, the client's address comes from X-Real-IP; elsewhere it is never read."""

from __future__ import annotations

import pytest
from django.core.exceptions import MiddlewareNotUsed
from django.http import HttpResponse
from django.test import Client, RequestFactory, override_settings

from trace_site.proxy import ProxyClientAddressMiddleware


def _seen_address(**headers: str) -> str:
    seen = {}

    def view(request):
        seen["address"] = request.META["REMOTE_ADDR"]
        return HttpResponse()

    request = RequestFactory().get("/", REMOTE_ADDR="172.18.0.5", **headers)
    ProxyClientAddressMiddleware(view)(request)
    return seen["address"]


def test_the_middleware_is_dropped_unless_behind_a_proxy():
    with override_settings(TRACE_BEHIND_PROXY=False), pytest.raises(MiddlewareNotUsed):
        ProxyClientAddressMiddleware(lambda request: HttpResponse())


@override_settings(TRACE_BEHIND_PROXY=True)
def test_behind_the_proxy_the_real_ip_header_is_the_client_address():
    assert _seen_address(HTTP_X_REAL_IP="203.0.113.7") == "203.0.113.7"
    assert _seen_address(HTTP_X_REAL_IP=" 2001:db8::1 ") == "2001:db8::1"


@override_settings(TRACE_BEHIND_PROXY=True)
def test_a_missing_or_malformed_header_keeps_the_socket_address():
    assert _seen_address() == "172.18.0.5"
    assert _seen_address(HTTP_X_REAL_IP="evil, 1.2.3.4") == "172.18.0.5"


@override_settings(TRACE_BEHIND_PROXY=False)
def test_by_default_a_client_cannot_choose_its_address():
    # The full stack: the header a client sends is ignored when no proxy is declared.
    seen = Client(HTTP_X_REAL_IP="203.0.113.9").get("/healthz")
    assert seen.wsgi_request.META["REMOTE_ADDR"] == "127.0.0.1"


@pytest.mark.django_db
@override_settings(TRACE_BEHIND_PROXY=True, SECURE_PROXY_SSL_HEADER=("HTTP_X_FORWARDED_PROTO",
                                                                     "https"),
                   SESSION_COOKIE_SECURE=False, CSRF_COOKIE_SECURE=False)
def test_cookies_are_secure_when_the_proxy_forwards_from_tls(users):
    from django.test import Client

    over_tls = Client(HTTP_X_FORWARDED_PROTO="https")
    page = over_tls.get("/accounts/login/")
    assert page.cookies["csrftoken"]["secure"] is True
    response = over_tls.post("/accounts/login/",
                             {"username": "alice", "password": "pw-alicealicealice"})
    assert response.status_code == 302
    assert response.cookies["sessionid"]["secure"] is True
    # Over plain http (the embedded default, no TLS) the cookies stay usable.
    plain = Client(HTTP_X_FORWARDED_PROTO="http")
    assert plain.get("/accounts/login/").cookies["csrftoken"]["secure"] == ""
