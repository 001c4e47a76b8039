"""Archive browsing views."""

from django.shortcuts import render

from archive.models import SubCorpus


def archive_home(request):
    sub_corpora = SubCorpus.objects.all()
    return render(request, "archive/home.html", {"sub_corpora": sub_corpora})
