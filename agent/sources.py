"""A source: one document of an investigation, as every page and export shows it.

`folded_sources` folds the verdict log per document (the agent's ranking, the live page's
counts); `reviewed_sources` applies the historian's overrides, order, notes and picked quotes
to it: the one ranking the review page, the exports and the cited answer follow.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field, fields
from datetime import datetime
from enum import StrEnum

from django.utils import timezone

from agent.engine.events import HeldChunkDropped
from agent.models import DocumentNote, Investigation, SourceOrder, Verdict
from archive.models import Chunk, Document
from archive.selectors import documents_by_keys
from common.sentences import sentence_spans


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


@dataclass
class FoldedSource:
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


def folded_sources(investigation: Investigation) -> list[FoldedSource]:
    """Fold the verdict log into one row per document, overrides applied, in the agent's order.

    The historian sees `agent.sources.reviewed_sources`, which puts their own order in
    force on top of this one; counts by state need only the fold.
    """
    sources: dict[str, FoldedSource] = {}
    accepted_by: dict[str, set[int]] = defaultdict(set)
    held: set[str] = set()
    promoted: set[str] = set()
    in_pool: dict[tuple[int | None, int | None], str] = {}  # held passages still in a pool
    for verdict in investigation.verdicts.select_related("user").order_by("id"):
        source = sources.setdefault(verdict.document_key, FoldedSource(verdict.document_key))
        source.sub_corpus = source.sub_corpus or verdict.sub_corpus
        if verdict.source == Verdict.Origin.HUMAN:
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
            if verdict.source == Verdict.Origin.HELD_REEVAL:
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


def source_counts(sources: list[FoldedSource]) -> SourceCounts:
    """Count the review's sources by state, overrides applied."""
    held = [s for s in sources if s.state == SourceState.HELD]
    return SourceCounts(
        accepted=sum(s.state == SourceState.ACCEPTED for s in sources), held=len(held),
        rejected=sum(s.state == SourceState.REJECTED for s in sources),
        set_aside=sum(s.set_aside and not s.human_decision for s in held),
    )


def ranked_document_keys(investigation: Investigation,
                         sources: dict[str, FoldedSource]) -> list[str]:
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


def _attach_documents(sources: dict[str, FoldedSource]) -> None:
    documents = documents_by_keys(list(sources))
    for key, source in sources.items():
        source.document = documents.get(key)


QUOTE_CHARS = 400
QUOTE_ORIGINS = {"verdict": "cited evidence", "chunk": "opening of the matched passage",
                 "historian": "quote picked by the historian"}
QUOTE_SENTENCES = 3


@dataclass(frozen=True)
class Quote:
    """The quoted passage: character offsets into the document, and where it came from."""

    text: str
    start: int | None
    end: int | None
    # "verdict": the span the verdict cites; "chunk": the chunk's opening sentences;
    # "historian": the passage the historian picked in the viewer (`by` names them)
    origin: str
    by: str = ""

    @property
    def label(self) -> str:
        """Say in words where the quote comes from."""
        return QUOTE_ORIGINS.get(self.origin, self.origin)

    @property
    def span(self) -> str:
        return f"{self.start}-{self.end}" if self.start is not None else ""


@dataclass(frozen=True)
class SourceDecision:
    """Who decided a source's state, when, and the rationale that decided it."""

    by: str  # "agent" or "historian"
    user: str = ""
    at: datetime | None = None
    reason: str = ""  # the historian's override reason, if any
    rationale: str = ""  # the decisive rationale
    rationale_by: str = "agent"  # "agent" or "historian"
    agent_rationale: str = ""

    @property
    def label(self) -> str:
        """Say who decided in one line, the time with its zone."""
        if self.by == "agent":
            return "the agent"
        return f"{self.user} (historian), {local_time(self.at)}" if self.at else self.user


@dataclass
class ReviewedSource(FoldedSource):
    """A source as reviewed: its place in the historian's order, its decision and evidence."""

    decision: SourceDecision = field(default_factory=lambda: SourceDecision(by="agent"))
    evidence: Quote | None = None  # the quote in force: the historian's pick, else the agent's
    agent_evidence: Quote | None = None  # the agent's, when the historian picked another


@dataclass(frozen=True)
class OrderInForce:
    """The accepted keys in the order in force, and whose order it is."""

    keys: list[str]
    user: str = ""
    at: datetime | None = None

    @property
    def by_historian(self) -> bool:
        return self.at is not None


def local_time(moment: datetime | None) -> str:
    """Format a time in the site's zone with the zone's name and UTC offset."""
    if moment is None:
        return ""
    local = timezone.localtime(moment)
    return local.strftime("%Y-%m-%d %H:%M %Z (UTC%:z)")


def iso_time(moment: datetime | None) -> str:
    """Format a time as ISO 8601 in the site's zone, offset included."""
    return timezone.localtime(moment).isoformat(timespec="seconds") if moment else ""


def latest_source_order(investigation: Investigation) -> SourceOrder | None:
    """Return the historian's newest order of the accepted sources, if they set one."""
    if investigation.pk is None:  # an investigation not yet saved has no order of its own
        return None
    return (investigation.source_orders.select_related("user")
            .order_by("-created_at", "-id").first())


def reviewed_sources(investigation: Investigation) -> list[ReviewedSource]:
    """Return every source with decision and evidence, accepted ones in the order in force."""
    sources = folded_sources(investigation)
    decisions = _decisions(investigation, sources)
    evidence = _evidence(investigation, sources)
    picked = _picked(investigation)
    rows = [ReviewedSource(**{f.name: getattr(s, f.name) for f in fields(FoldedSource)},
                           decision=decisions[s.document_key],
                           evidence=picked.get(s.document_key, evidence.get(s.document_key)),
                           agent_evidence=(evidence.get(s.document_key)
                                           if s.document_key in picked else None))
            for s in sources]
    accepted = [row for row in rows if row.state == SourceState.ACCEPTED]
    others = [row for row in rows if row.state != SourceState.ACCEPTED]
    saved = latest_source_order(investigation)
    if saved is not None:
        position = {key: i for i, key in enumerate(saved.document_keys)}
        # Sources accepted after the order was saved follow it, in the agent's order.
        accepted.sort(key=lambda row: position.get(row.document_key, len(position)))
    for rank, row in enumerate(accepted, start=1):
        row.rank = rank
    return accepted + others


def order_in_force(investigation: Investigation,
                   rows: list[ReviewedSource] | None = None) -> OrderInForce:
    """Return the accepted keys in the order exports follow, and who set it."""
    if rows is None:
        rows = reviewed_sources(investigation)
    keys = [row.document_key for row in rows if row.state == SourceState.ACCEPTED]
    saved = latest_source_order(investigation)
    if saved is None:
        return OrderInForce(keys)
    return OrderInForce(keys, user=display_name(saved.user), at=saved.created_at)


def moved(keys: list[str], key: str, direction: str) -> list[str]:
    """Return the keys with one moved a place up or down (unchanged at either end)."""
    if key not in keys or direction not in ("up", "down"):
        raise ValueError(f"Cannot move {key!r} {direction!r}.")
    keys = list(keys)
    index = keys.index(key)
    target = index - 1 if direction == "up" else index + 1
    if 0 <= target < len(keys):
        keys[index], keys[target] = keys[target], keys[index]
    return keys


def moved_to(keys: list[str], key: str, rank: int) -> list[str]:
    """Return the keys with one moved to `rank` (from 1; past either end, to that end)."""
    if key not in keys:
        raise ValueError(f"Cannot move {key!r}: it is not among the accepted sources.")
    rest = [k for k in keys if k != key]
    place = min(max(rank, 1), len(keys)) - 1
    return [*rest[:place], key, *rest[place:]]


def display_name(user, *, missing: str = "a former user") -> str:
    """Return a user's full name, else their login, else `missing` for a deleted account."""
    if user is None:
        return missing
    return user.get_full_name() or user.get_username()


def _decisions(investigation: Investigation,
               sources: list[FoldedSource]) -> dict[str, SourceDecision]:
    overrides: dict[str, Verdict] = {}
    for verdict in investigation.verdicts.filter(source=Verdict.Origin.HUMAN).select_related(
            "user").order_by("id"):
        overrides[verdict.document_key] = verdict
    decisions = {}
    for source in sources:
        agent_rationale = " | ".join(source.rationales)
        notes = _notes_newest_first(source.notes)
        override = overrides.get(source.document_key)
        reason = (override.note or override.rationale).strip() if override is not None else ""
        historian_text = reason or (notes[0].text if notes else "")
        decisions[source.document_key] = SourceDecision(
            by="agent" if override is None else "historian",
            user="" if override is None else display_name(override.user),
            at=None if override is None else override.created_at,
            reason=reason,
            rationale=historian_text or agent_rationale,
            rationale_by="historian" if historian_text else "agent",
            agent_rationale=agent_rationale,
        )
    return decisions


def _picked(investigation: Investigation) -> dict[str, Quote]:
    """The historian's newest picked quote per document."""
    if investigation.pk is None:
        return {}
    picks: dict[str, Quote] = {}
    for pick in investigation.evidence_picks.select_related("user").order_by("created_at", "id"):
        picks[pick.document_key] = Quote(text=pick.text, start=pick.start, end=pick.end,
                                            origin="historian", by=display_name(pick.user))
    return picks


def _notes_newest_first(notes: list[DocumentNote]) -> list[DocumentNote]:
    return sorted(notes, key=lambda note: (note.created_at, note.pk), reverse=True)


def _evidence(investigation: Investigation, sources: list[FoldedSource]) -> dict[str, Quote]:
    cited: dict[tuple[str, int | None], Verdict] = {}
    by_document: dict[str, Verdict] = {}
    agent_verdicts = (investigation.verdicts.exclude(source=Verdict.Origin.HUMAN)
                      .exclude(evidence_text="").order_by("id"))
    for verdict in agent_verdicts.only("document_key", "chunk_id", "decision", "evidence_text",
                                       "evidence_start", "evidence_end"):
        cited[(verdict.document_key, verdict.chunk_id)] = verdict
        if verdict.decision == Verdict.Decision.ACCEPT or verdict.document_key not in by_document:
            by_document[verdict.document_key] = verdict
    chunks = Chunk.objects.in_bulk([s.best_chunk for s in sources if s.best_chunk])
    found = {}
    for source in sources:
        quoted = cited.get((source.document_key, source.best_chunk))
        quoted = quoted or by_document.get(source.document_key)
        if quoted is not None:
            found[source.document_key] = Quote(
                text=" ".join(quoted.evidence_text.split()), start=quoted.evidence_start,
                end=quoted.evidence_end, origin="verdict")
        elif (chunk := chunks.get(source.best_chunk)) is not None:
            found[source.document_key] = opening_sentences(chunk.text, offset=chunk.char_start)
    return found


def opening_sentences(text: str, *, offset: int = 0, limit: int = QUOTE_CHARS) -> Quote:
    """Quote a passage's first sentences (at most `limit` characters), cut at a word boundary."""
    start = len(text) - len(text.lstrip())
    end = start
    sentences = 0
    for _, sentence_end in sentence_spans(text, split_glued=False):
        if sentence_end - start > limit or sentences == QUOTE_SENTENCES:
            break
        end, sentences = sentence_end, sentences + 1
    if not sentences:
        end = len(text.rstrip())
    cut = end - start > limit
    if cut:
        window = text[start:start + limit + 1]
        boundary = max(window.rfind(" "), window.rfind("\n"), window.rfind("\t"))
        end = start + (boundary if boundary > 0 else limit)
        end = len(text[:end].rstrip())
    quote = " ".join(text[start:end].split())
    return Quote(text=quote + ("…" if cut else ""), start=offset + start, end=offset + end,
                    origin="chunk")
