"""Site-level views: home, health, and the 400 page."""

from django.contrib.auth.decorators import login_not_required
from django.core.exceptions import BadRequest
from django.http import HttpResponseBadRequest, JsonResponse
from django.shortcuts import redirect
from django.views.decorators.cache import never_cache

from trace_site.health import run_checks


@login_not_required
@never_cache
def healthz(request):
    healthy, results = run_checks()
    return JsonResponse(
        {"status": "ok" if healthy else "error", "checks": results}, status=200 if healthy else 503
    )


def home(request):
    return redirect("investigation_list")


def bad_request(request, exception=None):
    """Say why a request was refused, as plain text, without reading the request again.

    Django's own 400 view checks the CSRF token first, which reads the body: a body Django could
    not parse would fail a second time there and leave the server to answer a 500. The message of
    a ``BadRequest`` is the site's own (a malformed number, a field too long); any other refusal
    (a suspicious header) is named only by its kind.
    """
    reason = str(exception) if isinstance(exception, BadRequest) and str(exception) else (
        "The request was malformed.")
    response = HttpResponseBadRequest(f"Bad request: {reason}\n",
                                      content_type="text/plain; charset=utf-8")
    response["Cache-Control"] = "no-store"
    return response
