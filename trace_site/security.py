"""Web hardening: no caching of private pages, Secure cookies over TLS, a limit on failed log-ins.

The Content-Security-Policy itself is Django's (SECURE_CSP in the settings, sent by
django.middleware.csp.ContentSecurityPolicyMiddleware).
"""

from __future__ import annotations

import hashlib
import ipaddress
import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.forms import AuthenticationForm, UsernameField
from django.contrib.auth.signals import user_logged_in, user_login_failed
from django.core.cache import BaseCache, caches
from django.dispatch import receiver
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.utils.cache import add_never_cache_headers, patch_cache_control

from trace_site import embedded

logger = logging.getLogger(__name__)

# The views whose POST checks a password.
LOGIN_VIEWS = frozenset({"login", "admin:login"})


class NoStoreMiddleware:
    """Forbid any cache (browser or proxy) to keep a page: every page here is private.

    Static files never get here (WhiteNoise answers them first); a page that set its own
    Cache-Control keeps it, plus no-store when a user is logged in.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if not response.has_header("Cache-Control"):
            add_never_cache_headers(response)
        elif getattr(request, "user", None) is not None and request.user.is_authenticated:
            patch_cache_control(response, no_store=True, private=True)
        return response


class SecureCookiesOverTlsMiddleware:
    """Mark every cookie ``Secure`` on a request that came over TLS.

    TRACE_SECURE_COOKIES sets it always; without it, a request the documented proxy forwards
    from https (``X-Forwarded-Proto``, read when TRACE_BEHIND_PROXY) still gets its session and
    CSRF cookies marked, so they never travel back over plain http.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if request.is_secure():
            for morsel in response.cookies.values():
                morsel["secure"] = True
        return response


def throttled_username(username: object) -> str:
    """The username as the log-in form hands it to authentication, case folded.

    The form's ``UsernameField`` strips it and applies NFKC, so "ｂｏｂ" (full width) logs in as
    "bob": the throttle counts that same name, never the raw one (case folded on top: "Bob" and
    "bob" share one count, which only makes the throttle stricter).
    """
    return (UsernameField().to_python(str(username or "")) or "").casefold()[:300]


def throttled_address(address: object) -> str:
    """The client's address in one spelling (an IPv4 address mapped into IPv6 as itself)."""
    try:
        parsed = ipaddress.ip_address(str(address or "").strip())
    except ValueError:
        return str(address or "unknown")
    mapped = getattr(parsed, "ipv4_mapped", None)
    return str(mapped or parsed)


@dataclass(frozen=True)
class LoginThrottle:
    """Count failed log-ins per username and address, and per address, in a fixed window.

    Both are the identity authentication sees: the normalised username (``throttled_username``)
    and the address in one spelling (``throttled_address``).
    """

    username: str
    address: str

    @classmethod
    def for_request(cls, request: HttpRequest, username: object) -> LoginThrottle:
        """Build the throttle of one log-in attempt."""
        return cls(throttled_username(username),
                   throttled_address(request.META.get("REMOTE_ADDR")))

    def keys(self) -> tuple[str, str]:
        """Return the cache keys (hashed: usernames may hold any character)."""
        pair = hashlib.sha256(f"{self.username}\x00{self.address}".encode()).hexdigest()
        address = hashlib.sha256(self.address.encode()).hexdigest()
        return f"login-failures:user:{pair}", f"login-failures:address:{address}"

    def blocked(self) -> bool:
        """Tell whether this username at this address (or the address) used up its attempts."""
        user_key, address_key = self.keys()
        try:
            counts = _throttle_cache().get_many([user_key, address_key])
        except Exception:  # the cache is down: passwords still guard the door
            logger.warning("login throttle unavailable; letting the attempt through",
                           exc_info=True)
            return False
        return (counts.get(user_key, 0) >= settings.TRACE_LOGIN_MAX_FAILURES
                or counts.get(address_key, 0) >= settings.TRACE_LOGIN_MAX_FAILURES_PER_ADDRESS)

    def record_failure(self) -> None:
        """Count one failed attempt; a window starts at the first failure."""
        try:
            cache = _throttle_cache()
            for key in self.keys():
                cache.add(key, 0, timeout=settings.TRACE_LOGIN_WINDOW_SECONDS)
                cache.incr(key)
        except Exception:
            logger.warning("login throttle unavailable; failure not counted", exc_info=True)

    def forget(self) -> None:
        """Clear the username's count after a successful log-in."""
        try:
            _throttle_cache().delete(self.keys()[0])
        except Exception:
            logger.warning("login throttle unavailable", exc_info=True)


_embedded_redis_checked = False


def _throttle_cache() -> BaseCache:
    """Return the throttle's cache, starting the embedded Redis the first time it is needed."""
    global _embedded_redis_checked
    if settings.TRACE_EMBEDDED_REDIS and not _embedded_redis_checked:
        embedded.ensure_redis(Path(settings.TRACE_DATA_DIR))
        _embedded_redis_checked = True
    return caches[settings.TRACE_LOGIN_THROTTLE_CACHE]


def throttled_message() -> str:
    """Say why a log-in is refused and for how long at most."""
    minutes = max(1, round(settings.TRACE_LOGIN_WINDOW_SECONDS / 60))
    return (f"Too many failed log-ins for this account from your address. "
            f"Try again in {minutes} minute{'s' if minutes != 1 else ''}.")


class LoginThrottleMiddleware:
    """Answer 429 to a log-in POST once its username and address ran out of attempts.

    The refusal comes before any password check, so a correct password does not get through
    either while the window lasts.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_view(self, request: HttpRequest, view_func: object, view_args: object,
                     view_kwargs: object) -> HttpResponse | None:
        """Refuse a throttled log-in before the view checks the password."""
        match = request.resolver_match
        if request.method != "POST" or match is None or match.view_name not in LOGIN_VIEWS:
            return None
        if not LoginThrottle.for_request(request, request.POST.get("username")).blocked():
            return None
        messages.error(request, throttled_message())
        response = TemplateResponse(
            request, "registration/login.html",
            {"form": AuthenticationForm(request), "next": request.POST.get("next", "")},
            status=429)
        response["Retry-After"] = str(settings.TRACE_LOGIN_WINDOW_SECONDS)
        return response


@receiver(user_login_failed, dispatch_uid="trace-login-throttle-failure")
def _count_failed_login(sender: object, credentials: dict, request: HttpRequest | None = None,
                        **kwargs: object) -> None:
    if request is not None:
        LoginThrottle.for_request(request, credentials.get("username")).record_failure()


@receiver(user_logged_in, dispatch_uid="trace-login-throttle-success")
def _forget_failed_logins(sender: object, request: HttpRequest | None, user: object,
                          **kwargs: object) -> None:
    if request is not None and hasattr(user, "get_username"):
        LoginThrottle.for_request(request, user.get_username()).forget()
