"""Behind a reverse proxy: take the client's address from the proxy, not the socket.

Behind nginx every request arrives from the proxy's address, so the per-address login
throttle would count every visitor as one. With TRACE_BEHIND_PROXY on, the address the
proxy writes in X-Real-IP (it overwrites any value a client sent) becomes REMOTE_ADDR, and
X-Forwarded-Proto tells Django the request came over HTTPS. Turn it on only when the
application server is reachable through the proxy alone: otherwise a client could choose
its own address.
"""

from __future__ import annotations

import contextlib
import ipaddress
from collections.abc import Callable

from django.conf import settings
from django.core.exceptions import MiddlewareNotUsed
from django.http import HttpRequest, HttpResponse

CLIENT_ADDRESS_HEADER = "HTTP_X_REAL_IP"


class ProxyClientAddressMiddleware:
    """Set REMOTE_ADDR from the proxy's X-Real-IP header (only with TRACE_BEHIND_PROXY)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        if not settings.TRACE_BEHIND_PROXY:
            raise MiddlewareNotUsed
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        forwarded = request.META.get(CLIENT_ADDRESS_HEADER, "").strip()
        with contextlib.suppress(ValueError):  # absent or not an address: keep the socket's
            request.META["REMOTE_ADDR"] = str(ipaddress.ip_address(forwarded))
        return self.get_response(request)
