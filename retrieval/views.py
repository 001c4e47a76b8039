"""Search page: one query box, a channel picker, sub-corpus and date filters."""

from __future__ import annotations

import logging

from django.shortcuts import render

from retrieval import services
from retrieval.forms import SearchForm
from retrieval.selectors import confidence_restricted, sub_corpus_choices

logger = logging.getLogger(__name__)


def search_page(request):
    """Show the search form and, once submitted, the documents found."""
    sub_corpora = sub_corpus_choices()
    submitted = bool(request.GET)
    form = SearchForm(request.GET or None, sub_corpora=sub_corpora)
    groups, error = [], None
    if submitted and form.is_valid():
        try:
            minimum, keep_unrated = form.confidence_floor()
            groups = services.search_documents(confidence_restricted(
                form.search_request(), minimum, keep_unrated=keep_unrated))
        except Exception:  # a broken channel (e.g. no embedding model) must not break the page
            logger.exception("search failed")
            error = "This search channel failed; try another one."
    weak_dense = (bool(groups) and form.cleaned_data.get("channel") == "dense"
                  and max(g.score for g in groups) < services.DENSE_ONLY_FLOOR)
    context = {"form": form, "groups": groups, "submitted": submitted, "error": error,
               "weak_dense": weak_dense, "dense_floor": services.DENSE_ONLY_FLOOR}
    template = "retrieval/search.html#results" if request.htmx else "retrieval/search.html"
    return render(request, template, context)
