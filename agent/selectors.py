"""Reads about investigations: access control, live steps, reviewed sources, evidence paths."""

from __future__ import annotations

import hmac
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date
from enum import StrEnum

from django.db.models import Case, Count, Q, QuerySet, Value, When
from django.http import Http404

from agent.engine.events import HeldChunkDropped, SearchRan, WarmStartRan
from agent.models import Batch, DocumentNote, Investigation, Verdict
from archive.models import Document
from archive.selectors import documents_by_keys

SEARCH_KINDS = (SearchRan.kind, WarmStartRan.kind)


class SourceState(StrEnum):
    """Where a document stands: the outcome of the decisions (`Verdict.Decision`) taken on it.

    A decision is what a verdict does (accept, hold, reject); a state is where it leaves the
    document (accepted, held, rejected). `STATE_AFTER` is the one mapping between the two.
    """

    ACCEPTED = "accepted"
    HELD = "held"
    REJECTED = "rejected"


STATE_AFTER: dict[str, SourceState] = {
    Verdict.Decision.ACCEPT: SourceState.ACCEPTED,
    Verdict.Decision.HOLD: SourceState.HELD,
    Verdict.Decision.REJECT: SourceState.REJECTED,
}


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


@dataclass
class Source:
    """One document as the review page shows it."""

    document_key: str
    sub_corpus: str = ""
    agent_state: str = ""  # a SourceState, from the agent's verdicts
    human_decision: str = ""  # the latest historian override, if any
    human_user: str = ""
    rationales: list[str] = field(default_factory=list)
    sub_question_indexes: list[int] = field(default_factory=list)
    evidence_chunks: list[int] = field(default_factory=list)
    notes: list[DocumentNote] = field(default_factory=list)
    confirmations: int = 0
    rank: int | None = None
    document: Document | None = None
    # Held by the agent but every held passage left the held pool to make room (or was
    # promoted elsewhere): still possibly relevant, no longer weighed by the agent.
    set_aside: bool = False

    @property
    def state(self) -> str:
        """The state the historian sees: an override wins over the agent."""
        return STATE_AFTER.get(self.human_decision, self.agent_state)

    @property
    def best_chunk(self) -> int | None:
        return self.evidence_chunks[0] if self.evidence_chunks else None


def folded_sources(investigation: Investigation) -> list[Source]:
    """Fold the verdict log into one row per document, overrides applied, in the agent's order.

    The historian sees `agent.source_review.reviewed_sources`, which puts their own order in
    force on top of this one; counts by state need only the fold.
    """
    sources: dict[str, Source] = {}
    accepted_by: dict[str, set[int]] = defaultdict(set)
    held: set[str] = set()
    promoted: set[str] = set()
    in_pool: dict[tuple[int | None, int | None], str] = {}  # held passages still in a pool
    for verdict in investigation.verdicts.select_related("user").order_by("id"):
        source = sources.setdefault(verdict.document_key, Source(verdict.document_key))
        source.sub_corpus = source.sub_corpus or verdict.sub_corpus
        if verdict.source == Verdict.Source.HUMAN:
            source.human_decision = verdict.decision
            source.human_user = verdict.user.get_username() if verdict.user else ""
            continue
        index = verdict.sub_question_index
        if index is not None and index not in source.sub_question_indexes:
            source.sub_question_indexes.append(index)
        if verdict.decision == Verdict.Decision.ACCEPT:
            accepted_by[verdict.document_key].add(verdict.sub_question_index or 0)
            if verdict.rationale and verdict.rationale not in source.rationales:
                source.rationales.append(verdict.rationale)
            if verdict.chunk_id and verdict.chunk_id not in source.evidence_chunks:
                source.evidence_chunks.insert(0, verdict.chunk_id)
            if verdict.source == Verdict.Source.HELD_REEVAL:
                promoted.add(verdict.document_key)
                in_pool.pop((verdict.sub_question_index, verdict.chunk_id), None)
        else:
            if verdict.decision == Verdict.Decision.HOLD:
                held.add(verdict.document_key)
                in_pool[(verdict.sub_question_index, verdict.chunk_id)] = verdict.document_key
            if verdict.rationale and not source.rationales:
                source.rationales.append(verdict.rationale)
            if verdict.chunk_id and verdict.chunk_id not in source.evidence_chunks:
                source.evidence_chunks.append(verdict.chunk_id)
    for dropped in _held_drops(investigation):
        in_pool.pop(dropped, None)
    still_held = set(in_pool.values())
    for key, source in sources.items():
        source.confirmations = len(accepted_by.get(key, ()))
        if source.confirmations:
            source.agent_state = SourceState.ACCEPTED
        elif key in held:
            source.agent_state = SourceState.HELD
            source.set_aside = key not in still_held
        else:
            source.agent_state = SourceState.REJECTED
    for note in investigation.notes.select_related("user"):
        if note.document_key in sources:
            sources[note.document_key].notes.append(note)
    _attach_documents(sources)
    ranked = ranked_document_keys(investigation, sources)
    for position, key in enumerate(ranked, start=1):
        sources[key].rank = position
    order = {key: i for i, key in enumerate(ranked)}
    return sorted(
        sources.values(),
        key=lambda s: (order.get(s.document_key, len(order)), s.state, s.set_aside,
                       s.document_key),
    )


def _held_drops(investigation: Investigation) -> list[tuple[int | None, int]]:
    """Return (sub-question, chunk id) of every passage that left a full held pool."""
    drops = []
    for step in investigation.steps.filter(kind=HeldChunkDropped.kind):
        event = step.event
        if isinstance(event, HeldChunkDropped):
            drops.append((event.sub_question_index, event.chunk_id))
    return drops


@dataclass(frozen=True)
class SourceCounts:
    """How many documents the historian sees in each state (the live and review pages agree)."""

    accepted: int
    held: int
    rejected: int
    set_aside: int  # among the held: no longer in the agent's held pool at the end

    @property
    def still_held(self) -> int:
        return self.held - self.set_aside


def source_counts(sources: list[Source]) -> SourceCounts:
    """Count the review's sources by state, overrides applied."""
    held = [s for s in sources if s.state == SourceState.HELD]
    return SourceCounts(
        accepted=sum(s.state == SourceState.ACCEPTED for s in sources), held=len(held),
        rejected=sum(s.state == SourceState.REJECTED for s in sources),
        set_aside=sum(s.set_aside and not s.human_decision for s in held),
    )


def ranked_document_keys(investigation: Investigation, sources: dict[str, Source]) -> list[str]:
    """The agent's ranking minus what the historian removed, plus what they accepted, in order."""
    ranked = [key for key in investigation.ranked_keys
              if key in sources and sources[key].state == SourceState.ACCEPTED]
    if not investigation.ranked_keys:
        # A run still in progress has no final ranking yet: order by confirmations.
        ranked = sorted((k for k, s in sources.items()
                         if s.agent_state == s.state == SourceState.ACCEPTED),
                        key=lambda k: -sources[k].confirmations)
    extra = [key for key, s in sources.items()
             if s.state == SourceState.ACCEPTED and key not in ranked]
    return ranked + extra


def _attach_documents(sources: dict[str, Source]) -> None:
    documents = documents_by_keys(list(sources))
    for key, source in sources.items():
        source.document = documents.get(key)


@dataclass
class EvidenceLink:
    """One path question → sub-question → search → chunk → verdict → rationale."""

    verdict: Verdict
    sub_question_text: str
    search: SearchRan | WarmStartRan | None
    chunk: object | None


def evidence_path(investigation: Investigation, document_key: str) -> list[EvidenceLink]:
    """Return every agent verdict on the document with the search that surfaced its chunk."""
    from archive.models import Chunk

    verdicts = list(
        investigation.verdicts.filter(document_key=document_key)
        .select_related("step", "user").order_by("id")
    )
    if not verdicts:
        raise Http404("This document has no verdict in this investigation")
    sub_question_texts = {sq.index: sq.text for sq in investigation.sub_questions.all()}
    searches = [event for step in investigation.steps.filter(kind__in=SEARCH_KINDS).order_by("seq")
                if isinstance(event := step.event, SearchRan | WarmStartRan)]
    chunks = Chunk.objects.in_bulk([v.chunk_id for v in verdicts if v.chunk_id])
    links = []
    for verdict in verdicts:
        search = None
        if verdict.step is not None and verdict.chunk_id:
            for found in searches:
                if found.seq > verdict.step.seq:
                    break
                if (found.sub_question_index == verdict.sub_question_index
                        and verdict.chunk_id in found.chunk_ids):
                    search = found
        links.append(EvidenceLink(
            verdict=verdict,
            sub_question_text=("" if verdict.sub_question_index is None
                              else sub_question_texts.get(verdict.sub_question_index, "")),
            search=search,
            chunk=chunks.get(verdict.chunk_id),
        ))
    return links


def evidence_range(investigation: Investigation, document_key: str,
                   chunk_id: int | None = None) -> str:
    """Return "start-end" of the evidence a verdict on the document cites, accepts first."""
    verdicts = (investigation.verdicts.filter(document_key=document_key,
                                              evidence_start__isnull=False,
                                              evidence_end__isnull=False)
                .exclude(source=Verdict.Source.HUMAN))
    if chunk_id is not None and verdicts.filter(chunk_id=chunk_id).exists():
        verdicts = verdicts.filter(chunk_id=chunk_id)
    accepted = verdicts.filter(decision=Verdict.Decision.ACCEPT).order_by("-id").first()
    verdict = accepted or verdicts.order_by("-id").first()
    if verdict is None or verdict.evidence_start is None or verdict.evidence_end is None:
        return ""
    return f"{verdict.evidence_start}-{verdict.evidence_end}"


def batches_for_user(user) -> QuerySet[Batch]:
    """List the user's batches, newest first, with how many questions each holds and finished."""
    return Batch.objects.filter(owner=user).annotate(
        total=Count("investigations"),
        finished=Count("investigations",
                       filter=Q(investigations__status=Investigation.Status.FINISHED)),
    ).order_by("-created_at")


def archive_date_range() -> tuple[date | None, date | None]:
    """Return the first and last document dates in the archive (None when it is empty)."""
    from django.db.models import Max, Min

    found = Document.objects.aggregate(first=Min("date"), last=Max("date"))
    return found["first"], found["last"]
