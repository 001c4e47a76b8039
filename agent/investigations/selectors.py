"""Reads of investigations and batches: lists, access by owner or share link, archive dates."""

from __future__ import annotations

import hmac
from datetime import date

from django.db.models import Case, Count, Max, Min, Q, QuerySet, Value, When
from django.http import Http404

from agent.models import Batch, Investigation
from archive.models import Document


def investigations_for_user(user, *, query: str = "", status: str = "") -> QuerySet[Investigation]:
    """List the user's own investigations, filtered by text (accents ignored) and status."""
    qs = Investigation.objects.filter(owner=user)
    if query:
        qs = qs.filter(Q(question__unaccent__icontains=query) | Q(qid__icontains=query))
    if status:
        qs = qs.filter(status=status)
    return qs


def comparable_investigations(user, investigation: Investigation,
                               limit: int = 100) -> list[Investigation]:
    """List the user's other investigations to compare one with: same question first, newest."""
    same = Case(When(question=investigation.question, then=Value(0)), default=Value(1))
    return list(Investigation.objects.filter(owner=user).exclude(pk=investigation.pk)
                .order_by(same, "-created_at")
                .only("pk", "question", "policy_label", "sub_corpus", "created_at")[:limit])


def investigation_for_owner(user, pk: int) -> Investigation:
    """Return the user's investigation or 404 (never reveal that another user's exists)."""
    try:
        return Investigation.objects.get(pk=pk, owner=user)
    except Investigation.DoesNotExist:
        raise Http404("No such investigation") from None


def investigation_for_viewer(user, pk: int, token: str = "") -> Investigation:
    """Return an investigation the user owns, or one shared with a matching read-only token."""
    try:
        investigation = Investigation.objects.get(pk=pk)
    except Investigation.DoesNotExist:
        raise Http404("No such investigation") from None
    if investigation.owner_id == user.pk:
        return investigation
    if share_token_matches(token, investigation.share_token):
        return investigation
    raise Http404("No such investigation")


def share_token_matches(given: str, stored: str) -> bool:
    """Compare a share token in constant time (how long it takes says nothing of the token)."""
    return bool(given and stored) and hmac.compare_digest(given.encode(), stored.encode())


def batches_for_user(user) -> QuerySet[Batch]:
    """List the user's batches, newest first, with how many questions each holds and finished."""
    return Batch.objects.filter(owner=user).annotate(
        total=Count("investigations"),
        finished=Count("investigations",
                       filter=Q(investigations__status=Investigation.Status.FINISHED)),
    ).order_by("-created_at")


def archive_date_range() -> tuple[date | None, date | None]:
    """Return the first and last document dates in the archive (None when it is empty)."""

    found = Document.objects.aggregate(first=Min("date"), last=Max("date"))
    return found["first"], found["last"]

