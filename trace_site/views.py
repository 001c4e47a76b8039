"""Site-level views: home and health."""

from django.contrib.auth.decorators import login_not_required
from django.http import JsonResponse
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
