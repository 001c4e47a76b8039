"""Read an investigation's steps as a story: an overview, one section per sub-question, a summary.

The live page renders what `investigation_story` returns; the poller re-renders only the
sections that received new steps. Searches become one line each, accepted passages one row
each, rejected and held passages fold into a count with their rows behind "details", and the
engine's internal events (agent steps, feedback, held-pool drops, model calls) become sentences
behind "details".
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from agent.engine.events import (
    AgentStepTaken,
    BriefingWritten,
    Event,
    FeedbackGiven,
    HeldChunkDropped,
    HeldReevaluated,
    InvestigationFinished,
    InvestigationStarted,
    ModelCalled,
    PlanMade,
    PlanRevised,
    RankingMade,
    SearchRan,
    StageFailed,
    SubQuestionFinished,
    SubQuestionStarted,
    VerdictGiven,
    WarmStartRan,
)
from agent.models import Investigation, Verdict
from agent.wording import (
    FEEDBACK_REASONS,
    FINISH_REASONS,
    HOLD_REASONS,
    STEP_ACTIONS,
    document_date,
)
from archive.models import Document
from archive.selectors import documents_by_keys
from common.usage import TokenUsage

CHANNEL_LABELS = {"bm25": "keywords (BM25)", "dense": "meaning (dense vectors)",
                  "temporal": "dates", "substring": "exact text (OCR-tolerant)",
                  "warm_start": "all channels, fused"}
SNIPPET_CHARS = 400
# A finished section folds to its accepted rows: this many with their evidence, the rest one line
# each, so that a finished run reads in about two screens (docs/live-page.md).
FINISHED_ROWS_IN_FULL = 2


@dataclass
class PassageRow:
    """One verdict on one passage, as the page shows it."""

    kind: ClassVar[str] = "passage"
    seq: int
    decision: str  # accept | reject | hold
    document_key: str
    chunk_id: int
    title: str
    date: str
    sub_corpus: str
    evidence: str = ""
    evidence_start: int | None = None
    evidence_end: int | None = None
    rationale: str = ""
    automatic: str = ""  # why the engine held it without the agent deciding so
    promoted: bool = False
    human_decision: str = ""  # the historian's decision in force on the document, if any
    human_user: str = ""

    @property
    def overruled(self) -> bool:
        """The historian decided otherwise than this verdict."""
        return bool(self.human_decision) and self.human_decision != self.decision


@dataclass
class SearchLine:
    """One search: channel, query, filters and how many passages it found."""

    kind: ClassVar[str] = "search"
    seq: int
    channel: str
    query: str
    filters: list[str]
    found: int
    shown: int
    left_out: str = ""
    accepted: int = 0
    folded: FoldedPassages | None = None  # the passages of its batch the agent did not accept


@dataclass
class FoldedPassages:
    """Consecutive rejected or held passages, folded into one line with their rows behind it."""

    kind: ClassVar[str] = "folded"
    rows: list[PassageRow] = field(default_factory=list)

    @property
    def rejected(self) -> int:
        return sum(row.decision == "reject" for row in self.rows)

    @property
    def held(self) -> int:
        return sum(row.decision == "hold" for row in self.rows)


@dataclass
class Sentence:
    """A plain sentence in the story (a replan, a held re-evaluation, a problem)."""

    kind: ClassVar[str] = "sentence"
    text: str
    tone: str = "note"  # note | problem


@dataclass
class SubQuestionSection:
    """Everything that happened for one sub-question."""

    index: int
    text: str = ""
    target_sub_corpus: str | None = None
    target_date: str | None = None
    entities: tuple[str, ...] = ()
    blocks: list[Any] = field(default_factory=list)
    internals: list[str] = field(default_factory=list)
    memory: dict[str, str] = field(default_factory=dict)
    briefing: BriefingWritten | None = None
    finished: SubQuestionFinished | None = None
    steps_used: int = 0
    accepted: int = 0
    held: int = 0
    rejected: int = 0
    set_aside: int = 0
    model_calls: int = 0
    usage: TokenUsage = TokenUsage()
    last_seq: int = 0
    batch: SearchLine | None = None  # the search whose passages are being reviewed

    @property
    def number(self) -> int:
        return self.index + 1

    @property
    def accepted_rows(self) -> list[PassageRow]:
        """The passages the agent accepted, in the order it did: what a finished section shows."""
        return [block for block in self.blocks
                if isinstance(block, PassageRow) and block.decision == "accept"]

    @property
    def accepted_in_full(self) -> list[PassageRow]:
        """The first accepted rows of a finished section, shown with their evidence."""
        return self.accepted_rows[:FINISHED_ROWS_IN_FULL]

    @property
    def accepted_in_brief(self) -> list[PassageRow]:
        """The other accepted rows of a finished section, one line each (title and badges)."""
        return self.accepted_rows[FINISHED_ROWS_IN_FULL:]

    @property
    def searches(self) -> int:
        return sum(isinstance(block, SearchLine) for block in self.blocks)

    @property
    def finish_reason(self) -> str:
        if self.finished is None:
            return ""
        return FINISH_REASONS.get(self.finished.reason, self.finished.reason)


@dataclass
class Overview:
    """The investigation-level events: start, plan, ranking, end."""

    started: InvestigationStarted | None = None
    plan: PlanMade | None = None
    planned: int = 0
    ranking: RankingMade | None = None
    finished: InvestigationFinished | None = None
    problems: list[str] = field(default_factory=list)
    model_calls: int = 0
    sub_questions_run: int = 0  # counted over every step, whichever sections are rendered


@dataclass
class Story:
    overview: Overview
    sections: list[SubQuestionSection]
    last_seq: int = 0

    @property
    def current(self) -> SubQuestionSection | None:
        return self.sections[-1] if self.sections else None


def hold_reason(reason: str | None) -> str:
    """Say in words why the engine held a passage without the agent deciding so."""
    return HOLD_REASONS.get(reason or "", "")


def _snippet(text: str) -> str:
    text = " ".join(text.split())
    if len(text) <= SNIPPET_CHARS:
        return text
    cut = text[:SNIPPET_CHARS].rsplit(" ", 1)[0]
    return cut + "…"


def _event_evidence(event: VerdictGiven) -> tuple[str, int | None, int | None]:
    """Read the evidence passage a verdict event carries, if any."""
    found = getattr(event, "evidence", None)
    if found is None or not getattr(found, "text", ""):
        return "", None, None
    return found.text, found.start, found.end


class _Titles:
    """Titles, dates and sub-corpus names of the documents the story mentions."""

    def __init__(self, keys: Iterable[str]) -> None:
        self.documents: dict[str, Document] = documents_by_keys(set(keys))

    def title(self, key: str) -> str:
        document = self.documents.get(key)
        return (document.title if document and document.title else key)

    def date(self, key: str) -> str:
        document = self.documents.get(key)
        return document_date(document) if document else ""

    def sub_corpus(self, key: str, fallback: str) -> str:
        document = self.documents.get(key)
        return document.sub_corpus.name if document else fallback


def _keys(events: list[Event]) -> set[str]:
    keys: set[str] = set()
    for event in events:
        if isinstance(event, VerdictGiven | HeldChunkDropped):
            keys.add(event.document_key)
    return keys


def _filters(event: SearchRan, sc_names: dict[str, str]) -> list[str]:
    filters = []
    if event.sub_corpus:
        filters.append(sc_names.get(event.sub_corpus, event.sub_corpus))
    if event.date_from or event.date_to:
        filters.append(f"{event.date_from or '…'} → {event.date_to or '…'}")
    return filters


def _search_line(event: SearchRan | WarmStartRan, sc_names: dict[str, str]) -> SearchLine:
    if isinstance(event, WarmStartRan):
        filters = [sc_names.get(event.sub_corpus, event.sub_corpus)] if event.sub_corpus else []
        if event.target_date:
            filters.append(f"around {event.target_date}")
        return SearchLine(event.seq, CHANNEL_LABELS["warm_start"], event.query, filters,
                          len(event.chunk_ids), len(event.chunk_ids))
    left_out = ""
    if event.excluded_chunks or event.excluded_documents:
        left_out = (f"{event.excluded_chunks} already read, "
                    f"{event.excluded_documents} already accepted left out")
    return SearchLine(event.seq, CHANNEL_LABELS.get(event.channel, event.channel), event.query,
                      _filters(event, sc_names), len(event.chunk_ids),
                      len(event.shown_chunk_ids), left_out)


def _human_decisions(investigation: Investigation) -> dict[str, tuple[str, str]]:
    """The historian's decision in force per document (the last one): (decision, username)."""
    decisions: dict[str, tuple[str, str]] = {}
    for verdict in (Verdict.objects.filter(investigation=investigation,
                                           source=Verdict.Origin.HUMAN)
                    .select_related("user").order_by("id")):
        decisions[verdict.document_key] = (verdict.decision,
                                           verdict.user.get_username() if verdict.user else "")
    return decisions


def _passage(event: VerdictGiven, titles: _Titles, stored: dict[int, Verdict],
             human: dict[str, tuple[str, str]]) -> PassageRow:
    verdict = stored.get(event.seq)
    evidence, start, end = "", None, None
    if verdict is not None and verdict.evidence_text:
        evidence, start, end = (verdict.evidence_text, verdict.evidence_start,
                                verdict.evidence_end)
    else:
        evidence, start, end = _event_evidence(event)
    automatic = hold_reason(event.reason) if event.auto_held else ""
    human_decision, human_user = human.get(event.document_key, ("", ""))
    return PassageRow(
        seq=event.seq, decision=event.verdict, document_key=event.document_key,
        chunk_id=event.chunk_id, title=titles.title(event.document_key),
        date=titles.date(event.document_key),
        sub_corpus=titles.sub_corpus(event.document_key, event.sub_corpus),
        evidence=_snippet(evidence) if evidence else "", evidence_start=start,
        evidence_end=end, rationale="" if automatic else event.rationale, automatic=automatic,
        promoted=event.source == "held_reeval", human_decision=human_decision,
        human_user=human_user)


def _section_event(section: SubQuestionSection, event: Event, titles: _Titles,
                   stored: dict[int, Verdict], sc_names: dict[str, str],
                   human: dict[str, tuple[str, str]]) -> None:
    """Add one event to its sub-question's section."""
    section.last_seq = max(section.last_seq, event.seq)
    if isinstance(event, SubQuestionStarted):
        section.text, section.target_sub_corpus = event.text, event.target_sub_corpus
        section.target_date, section.entities = event.target_date, event.entities
    elif isinstance(event, SearchRan | WarmStartRan):
        section.batch = _search_line(event, sc_names)
        section.blocks.append(section.batch)
    elif isinstance(event, VerdictGiven):
        row = _passage(event, titles, stored, human)
        search = section.batch
        if row.decision == "accept":
            section.accepted += 1
            section.blocks.append(row)
            if search is not None:
                search.accepted += 1
            return
        if row.decision == "hold":
            section.held += 1
        else:
            section.rejected += 1
        if search is not None:
            search.folded = search.folded or FoldedPassages()
            search.folded.rows.append(row)
            return
        if not section.blocks or not isinstance(section.blocks[-1], FoldedPassages):
            section.blocks.append(FoldedPassages())
        section.blocks[-1].rows.append(row)
    elif isinstance(event, AgentStepTaken):
        section.steps_used = max(section.steps_used, event.effective_step)
        action = STEP_ACTIONS.get(event.action, event.action)
        counted = "" if event.productive else " (not counted among the steps used)"
        thought = f": {event.thought}" if event.thought else ""
        section.internals.append(f"Step {event.effective_step} {action}{thought}{counted}.")
        section.memory = {slot.replace("_", " ").capitalize(): text
                          for slot, text in event.memory.as_dict().items()}
    elif isinstance(event, HeldChunkDropped):
        section.set_aside += 1
        section.internals.append(
            f"The held pool was full (it keeps {event.pool_size}): a passage of "
            f"“{titles.title(event.document_key)}” was set aside to make room.")
    elif isinstance(event, FeedbackGiven):
        said = FEEDBACK_REASONS.get(event.reason, "a step could not be used")
        search = section.batch
        if event.reason == "empty_result" and search is not None and search.query:
            said = f"the search by {search.channel} for “{search.query}” found nothing new"
        section.internals.append(f"Set back: {said}; the agent was told so.")
    elif isinstance(event, ModelCalled):
        section.model_calls += 1
        section.usage += event.usage
        section.internals.append(
            f"A model call: {event.usage.input_tokens} → {event.usage.output_tokens} tokens in "
            f"{event.seconds:.2f} s.")
    elif isinstance(event, HeldReevaluated):
        section.batch = None  # verdicts from here on belong to no search
        if event.promoted or event.kept:
            section.blocks.append(Sentence(
                f"Held passages re-read at the end: {len(event.promoted)} promoted, "
                f"{len(event.kept)} kept on hold."))
    elif isinstance(event, PlanRevised):
        section.blocks.append(Sentence(
            "The remaining plan was revised." if event.changed
            else "The remaining plan was kept as it was."))
    elif isinstance(event, StageFailed):
        section.blocks.append(Sentence(
            f"No usable reply at the {event.stage.replace('_', ' ')} stage"
            f"{': a default was used' if event.fallback else ''}.", tone="problem"))
    elif isinstance(event, BriefingWritten):
        section.briefing = event
    elif isinstance(event, SubQuestionFinished):
        section.finished = event
        section.steps_used = max(section.steps_used, event.effective_steps)


def _overview_event(overview: Overview, event: Event) -> None:
    if isinstance(event, InvestigationStarted):
        overview.started = event
    elif isinstance(event, PlanMade):
        overview.plan, overview.planned = event, len(event.sub_questions)
    elif isinstance(event, RankingMade):
        overview.ranking = event
    elif isinstance(event, InvestigationFinished):
        overview.finished = event
    elif isinstance(event, ModelCalled):
        overview.model_calls += 1
    elif isinstance(event, StageFailed):
        overview.problems.append(f"{event.stage}: {event.message}")


def investigation_story(investigation: Investigation, sc_names: dict[str, str],
                        only: set[int] | None = None) -> Story:
    """Fold the investigation's steps into a story (only the listed sections when `only`)."""
    steps = list(investigation.steps.order_by("seq"))
    events = [step.event for step in steps]
    stored = {verdict.step.seq: verdict for verdict in
              Verdict.objects.filter(investigation=investigation, step__isnull=False)
              .select_related("step").only("step__seq", "evidence_text", "evidence_start",
                                          "evidence_end")
              if verdict.step is not None}
    wanted = [event for event in events
              if only is None or event.sub_question_index is None
              or event.sub_question_index in only]
    titles = _Titles(_keys(wanted))
    human = _human_decisions(investigation)
    overview = Overview()
    sections: dict[int, SubQuestionSection] = {}
    overview.sub_questions_run = len({event.sub_question_index for event in events
                                      if event.sub_question_index is not None})
    for event in events:
        if isinstance(event, PlanRevised) and event.sub_question_index is not None:
            overview.planned = event.sub_question_index + len(event.after)
        if event.sub_question_index is None:
            _overview_event(overview, event)
            continue
        if only is not None and event.sub_question_index not in only:
            continue
        index = event.sub_question_index
        section = sections.setdefault(index, SubQuestionSection(index))
        _section_event(section, event, titles, stored, sc_names, human)
    return Story(overview, [sections[i] for i in sorted(sections)],
                 last_seq=steps[-1].seq if steps else 0)


def touched_sections(investigation: Investigation, after_seq: int) -> tuple[set[int], set[int]]:
    """Return (sections with new steps, those among them already on the page)."""
    new = {index for index in investigation.steps.filter(
        seq__gt=after_seq, sub_question_index__isnull=False
    ).values_list("sub_question_index", flat=True)
        if index is not None}
    shown = {index for index in investigation.steps.filter(
        seq__lte=after_seq, sub_question_index__in=new
    ).values_list("sub_question_index", flat=True)
        if index is not None}
    return new, shown

