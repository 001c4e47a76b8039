"""Export reviewed sources as BibTeX, RIS, CSL-JSON, CSV or Markdown, and the full trace.

The Markdown export and the trace also carry the cited answer: the newest draft in Markdown,
every draft in the trace.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime

import rispy
from bibtexparser import Library, write_string
from bibtexparser.model import Entry, Field
from django.conf import settings
from django.utils import timezone

from agent.engine.events import ModelCalled
from agent.models import AnswerDraft, Investigation
from agent.review.cited_answer import latest_draft
from agent.review.export_safety import (
    bibtex_keys,
    bibtex_value,
    csv_cell,
    md_code,
    md_link,
    md_text,
    one_line,
)
from agent.sources import (
    QUOTE_ORIGINS,
    ReviewedSource,
    SourceState,
    display_name,
    iso_time,
    latest_source_order,
    local_time,
    order_in_force,
    reviewed_sources,
)
from archive.locators import page_bounds, page_locator

CSV_BOM = "\ufeff"

@dataclass
class Note:
    """A historian's note on a source, with its author and time."""

    text: str
    author: str
    at: str  # ISO 8601 with offset

    @property
    def attributed(self) -> str:
        return f"{self.text} ({self.author}, {self.at})" if self.author else self.text


@dataclass
class Citation:
    """The archival fields of one cited source, with who decided it and why."""

    key: str
    rank: int | None
    state: str
    title: str
    publication: str
    sub_corpus: str
    genre: str
    date: str
    page: str
    url: str
    ocr_confidence: float | None  # the document's mean word confidence; None unless scanned
    quote: str
    quote_start: int | None
    quote_end: int | None
    quote_origin: str  # verdict (the cited span), historian (their pick) or chunk (its opening)
    rationale: str  # the decisive rationale
    rationale_by: str  # agent or historian
    agent_rationale: str
    decided_by: str  # agent or historian
    decider: str  # "the agent", or the historian's name
    decided_at: str  # ISO 8601 with offset; empty for the agent
    decided_at_local: str  # the same time for reading, with the zone's name and offset
    confirmations: int
    policy: str
    historian_notes: list[Note] = field(default_factory=list)

    @property
    def quote_span(self) -> str:
        return f"{self.quote_start}-{self.quote_end}" if self.quote_start is not None else ""

    @property
    def notes(self) -> str:
        return " | ".join(note.text for note in self.historian_notes)

    @property
    def notes_attributed(self) -> str:
        return " | ".join(note.attributed for note in self.historian_notes)

    @property
    def decision_line(self) -> str:
        """Say who decided, when (with time zone) and on what grounds."""
        if self.decided_by == "agent":
            return f"Decided by the agent: {self.state}"
        when = f", {self.decided_at_local}" if self.decided_at_local else ""
        return f"Decided by {self.decider} (historian){when}: {self.state}"


class UnknownSelection(ValueError):
    """A selection names a source that is neither accepted nor held in this investigation."""


def citations(investigation: Investigation, *, include_held: bool = False,
              rows: list[ReviewedSource] | None = None,
              selected: list[str] | None = None) -> list[Citation]:
    """Build citations of the accepted sources (held ones on request) in the order in force.

    ``selected`` (document keys) narrows them to the historian's choice among the accepted and
    held sources, in the order in force; a key that is neither raises ``UnknownSelection``.
    """
    wanted = {SourceState.ACCEPTED, SourceState.HELD} if include_held else {SourceState.ACCEPTED}
    if rows is None:
        rows = reviewed_sources(investigation)
    if selected is not None:
        chosen = set(selected)
        citable = {row.document_key for row in rows
                   if row.state in (SourceState.ACCEPTED, SourceState.HELD)}
        unknown = sorted(chosen - citable)
        if unknown:
            raise UnknownSelection(
                f"Not an accepted or held source of this investigation: {unknown[0][:200]}")
        rows = [row for row in rows if row.document_key in chosen]
        wanted = {SourceState.ACCEPTED, SourceState.HELD}
    return [_citation(row, investigation.policy_label) for row in rows if row.state in wanted]


def _citation(source: ReviewedSource, policy: str) -> Citation:
    doc = source.document
    evidence = source.evidence
    decision = source.decision
    notes = sorted(source.notes, key=lambda note: (note.created_at, note.pk))
    return Citation(
        key=source.document_key,
        rank=source.rank,
        state=source.state,
        title=getattr(doc, "title", "") or source.document_key,
        publication=getattr(doc, "publication", "") or "",
        sub_corpus=source.sub_corpus,
        genre=doc.sub_corpus.genre if doc is not None else "",
        date=doc.date.isoformat() if doc is not None and doc.date else "",
        page=page_locator(doc, evidence.start if evidence else None,
                          evidence.end if evidence else None),
        url=getattr(doc, "url", "") or "",
        ocr_confidence=getattr(doc, "ocr_confidence", None),
        quote=evidence.text if evidence else "",
        quote_start=evidence.start if evidence else None,
        quote_end=evidence.end if evidence else None,
        quote_origin=evidence.origin if evidence else "",
        rationale=decision.rationale,
        rationale_by=decision.rationale_by,
        agent_rationale=decision.agent_rationale,
        decided_by=decision.by,
        decider=decision.user if decision.by == "historian" else "the agent",
        decided_at=iso_time(decision.at),
        decided_at_local=local_time(decision.at),
        confirmations=source.confirmations,
        policy=policy,
        historian_notes=[Note(text=note.text, author=display_name(note.user, missing=""),
                              at=iso_time(note.created_at)) for note in notes],
    )


def _evidence_line(item: Citation) -> str:
    if not item.quote_span:
        return ""
    what = QUOTE_ORIGINS.get(item.quote_origin, item.quote_origin)
    return f"{what}, characters {item.quote_span} of TRACE source {item.key}"


def to_bibtex(items: list[Citation], investigation: Investigation) -> str:
    library = Library()
    for item, key in zip(items, bibtex_keys([i.key for i in items]), strict=True):
        addendum = "; ".join(part for part in (
            item.decision_line, f"rank {item.rank}" if item.rank else "",
            f"agent's rationale: {item.agent_rationale}"
            if item.agent_rationale and item.rationale_by == "historian" else "",
            _evidence_line(item) or f"TRACE source {item.key}") if part)
        fields = {
            "title": item.title,
            "journal" if item.genre == "press" else "howpublished": item.publication,
            "date": item.date,
            "year": item.date[:4],
            "pages": "--".join(part for part in page_bounds(item.page) if part),
            "url": item.url,
            "annote": item.rationale,
            "note": item.notes_attributed,
            "abstract": item.quote,
            "keywords": item.sub_corpus,
            "addendum": addendum,
        }
        entry_type = "article" if item.genre == "press" else "misc"
        library.add(Entry(entry_type, key, [Field(name, bibtex_value(value))
                                            for name, value in fields.items() if value]))
    return write_string(library)


def to_ris(items: list[Citation], investigation: Investigation) -> str:
    entries = []
    for item in items:
        notes = [item.decision_line, f"Why ({item.rationale_by}): {item.rationale}"
                 if item.rationale else ""]
        notes += [f"Note: {note.attributed}" for note in item.historian_notes]
        entry = {
            "type_of_reference": "NEWS" if item.genre == "press" else "HEAR",
            "id": item.key,
            "title": item.title,
            "secondary_title": item.publication,
            "date": item.date.replace("-", "/"),
            "year": item.date[:4],
            "urls": [item.url] if item.url else [],
            "notes": [note for note in notes if note],
            "abstract": item.quote,
            "keywords": [item.sub_corpus],
            "start_page": page_bounds(item.page)[0],
            "end_page": page_bounds(item.page)[1],
            "custom1": item.decider,
            "custom2": item.decided_at,
            "custom3": item.quote_span,
            "custom4": str(item.rank or ""),
        }
        entries.append(_ris_safe({k: v for k, v in entry.items() if v}))
    return rispy.dumps(entries)


def _ris_safe(entry: dict) -> dict:
    # A line break inside a value would start a new tag (or end the record: "ER  -").
    safe: dict = {}
    for name, value in entry.items():
        if isinstance(value, list):
            safe[name] = [kept for v in value if (kept := one_line(v))]
        else:
            safe[name] = one_line(value)
    return {name: value for name, value in safe.items() if value}


def to_csl_json(items: list[Citation], investigation: Investigation) -> str:
    records = []
    for item in items:
        record: dict = {
            "id": item.key,
            "type": "article-newspaper" if item.genre == "press" else "hearing",
            "title": item.title,
            "container-title": item.publication,
            "annote": item.rationale,
            "abstract": item.quote,
            "archive": "TRACE",
            "archive_location": item.key,
            "custom": {
                "rank": item.rank, "decided_by": item.decided_by, "decider": item.decider,
                "decided_at": item.decided_at, "rationale_by": item.rationale_by,
                "agent_rationale": item.agent_rationale, "evidence_start": item.quote_start,
                "evidence_end": item.quote_end, "evidence_origin": item.quote_origin,
            },
        }
        if item.historian_notes:
            record["note"] = item.notes_attributed
        if item.date:
            record["issued"] = {"date-parts": [[int(p) for p in item.date.split("-")]]}
        if item.url:
            record["URL"] = item.url
        if item.page:
            record["page"] = item.page
        records.append(record)
    return json.dumps(records, ensure_ascii=False, indent=2)


CSV_COLUMNS = ["rank", "state", "key", "title", "publication", "sub_corpus", "date", "page",
               "url", "ocr_confidence", "quote", "quote_start", "quote_end", "quote_origin",
               "rationale", "rationale_by", "agent_rationale", "decided_by", "decider",
               "decided_at", "notes", "notes_by", "confirmations", "policy"]


def to_csv(items: list[Citation], investigation: Investigation) -> str:
    """Write one row per source, preceded by a UTF-8 byte order mark for spreadsheets."""
    buffer = io.StringIO()
    buffer.write(CSV_BOM)
    writer = csv.DictWriter(buffer, fieldnames=CSV_COLUMNS, extrasaction="ignore")
    writer.writeheader()
    for item in items:
        row = {column: getattr(item, column, "") for column in CSV_COLUMNS}
        row["notes_by"] = " | ".join(f"{n.author}, {n.at}" for n in item.historian_notes)
        confidence = item.ocr_confidence
        row["ocr_confidence"] = f"{confidence:.3f}" if confidence is not None else ""
        writer.writerow({column: csv_cell(value) for column, value in row.items()})
    return buffer.getvalue()


def to_markdown(items: list[Citation], investigation: Investigation) -> str:
    """Write a readable list: question, then each source with decision, evidence and notes."""
    order_line = ""
    saved = latest_source_order(investigation)
    if saved is not None:
        order_line = (f" Order set by {md_text(display_name(saved.user))}, "
                      f"{local_time(saved.created_at)}.")
    lines = [f"# Sources: {md_text(investigation.question, heading=True)}", "",
             f"Found by TRACE ({md_text(investigation.policy_label)}), "
             f"{len(items)} source{'s' if len(items) != 1 else ''}, exported "
             f"{local_time(timezone.now())}.{order_line}", ""]
    draft = latest_draft(investigation)
    if draft is not None:
        lines += _markdown_answer(draft, current_keys=[item.key for item in items])
        lines += ["## Sources", ""]
    for position, item in enumerate(items, start=1):
        marker = f"{position}. "
        indent = " " * len(marker)
        page = f"p. {item.page}" if item.page[:1].isdigit() else item.page
        where = ", ".join(p for p in (item.publication, item.date, page) if p)
        head = f"**{md_text(item.title)}**" + (f" — {md_text(where)}" if where else "")
        lines.append(f"{marker}{head} ({md_code(item.key)})")
        block = []
        if item.url:
            block.append(md_link(item.url))
        decision = md_text(item.decision_line) + "."
        if item.rationale:
            decision += f" Why ({item.rationale_by}): {md_text(item.rationale)}"
        block.append(decision)
        if item.quote:
            block.append(f"> {md_text(item.quote)}")
            if item.quote_span:
                what = QUOTE_ORIGINS.get(item.quote_origin, item.quote_origin).capitalize()
                block.append(f"*{what}, characters {item.quote_start}–{item.quote_end}.*")
        if item.historian_notes:
            block.append("Notes:\n\n" + "\n".join(
                f"{indent}- {md_text(note.text)} — {md_text(note.author)}, {md_text(note.at)}"
                for note in item.historian_notes))
        for paragraph in block:
            lines += ["", indent + paragraph]
        lines.append("")
    return "\n".join(lines)


def _markdown_answer(draft: AnswerDraft, *, current_keys: list[str]) -> list[str]:
    """Write the newest draft of the answer, each sentence followed by its [n] citations."""
    by = f" by {md_text(display_name(draft.user))}" if draft.user_id else ""
    lines = ["## Answer", "",
             f"*{md_text(draft.label)}. Drafted {local_time(draft.created_at)}{by} from "
             f"{len(draft.sources)} accepted source{'s' if len(draft.sources) != 1 else ''}; "
             "the numbers are those of the list below.*", ""]
    if draft.source_keys != current_keys:
        lines += ["*The decisions changed after this draft: its numbers follow the accepted "
                  "sources as they were then, not the list below. Redraft on the review page.*",
                  ""]
    for section in draft.answer_sections:
        if section.heading:
            lines += [f"### {md_text(section.heading, heading=True)}", ""]
        sentences = [md_text(sentence.text) + "".join(f" [{c.number}]"
                                                      for c in sentence.citations)
                     for sentence in section.sentences]
        lines += [" ".join(sentences), ""]
    if not draft.sentence_count:
        lines += ["*No sentence was kept.*", ""]
    if draft.dropped:
        lines += [f"*{md_text(draft.dropped_line)}*", ""]
    return lines


def _json_default(value):
    if isinstance(value, datetime):
        return iso_time(value)
    if isinstance(value, date):
        return value.isoformat()
    return str(value)


def to_trace_json(items: list[Citation], investigation: Investigation) -> str:
    """Write the whole run: settings, model, prompts, steps, paid replies, historian decisions.

    The cited sources are not enough to audit a run, so this writer reads every reviewed source
    (held and rejected ones too) from the investigation itself and leaves `items` aside.
    """
    rows = list(investigation.steps.order_by("seq"))
    events = [row.event for row in rows]
    steps = [{"seq": event.seq, "kind": event.kind, "subquestion": event.sub_question_index,
              "payload": event.payload(), "created_at": row.created_at}
             for row, event in zip(rows, events, strict=True)]
    prompts = sorted({(e.prompt_name, e.prompt_hash) for e in events if isinstance(e, ModelCalled)})
    replies = list(investigation.llm_call_records.order_by("ordinal").values(
        "ordinal", "role", "prompt_hash", "model", "response", "input_tokens", "output_tokens",
        "cached_tokens", "seconds", "created_at"))
    overrides = list(investigation.verdicts.filter(source="human").order_by("id").values(
        "document_key", "decision", "note", "user__username", "created_at"))
    notes = list(investigation.notes.order_by("created_at", "id").values(
        "document_key", "text", "user__username", "created_at"))
    orders = list(investigation.source_orders.order_by("created_at", "id").values(
        "document_keys", "user__username", "created_at"))
    reviewed = reviewed_sources(investigation)
    order = order_in_force(investigation, reviewed)
    data = {
        "question": investigation.question,
        "qid": investigation.qid,
        "status": investigation.status,
        "policy": investigation.policy,
        "policy_label": investigation.policy_label,
        "models": investigation.models_used,
        "engine_settings": investigation.engine_settings,
        "filters": {"sub_corpus": investigation.sub_corpus,
                    "date_from": investigation.date_from, "date_to": investigation.date_to},
        "prompts": [{"name": name, "sha256": digest} for name, digest in prompts],
        "time_zone": settings.TIME_ZONE,
        "ranked_ids": order.keys,
        "order": {"set_by": order.user or "agent", "set_at": order.at},
        "agent_ranked_ids": investigation.ranked_keys,
        "sources": [_trace_source(row) for row in reviewed],
        "usage": {"llm_calls": investigation.llm_calls, **investigation.usage.as_fields(),
                  "cost": investigation.cost,
                  "model_seconds": investigation.model_seconds,
                  "engine_seconds": investigation.engine_seconds},
        "steps": steps,
        "model_replies": replies,
        "overrides": overrides,
        "notes": notes,
        "source_orders": orders,
        "answer_drafts": [_trace_answer(draft, order.keys) for draft in
                          investigation.answer_drafts.select_related("user")
                          .order_by("created_at", "id")],
        "created_at": investigation.created_at,
        "finished_at": investigation.finished_at,
    }
    return json.dumps(data, ensure_ascii=False, indent=2, default=_json_default)


def _trace_source(row: ReviewedSource) -> dict:
    decision = row.decision
    evidence = row.evidence
    return {
        "document_key": row.document_key, "rank": row.rank, "state": row.state,
        "agent_state": row.agent_state,
        "decided_by": decision.by, "decider": decision.user or "agent",
        "decided_at": decision.at, "rationale": decision.rationale,
        "rationale_by": decision.rationale_by, "agent_rationale": decision.agent_rationale,
        "historian_reason": decision.reason,
        "evidence": None if evidence is None else {
            "text": evidence.text, "start": evidence.start, "end": evidence.end,
            "origin": evidence.origin, "by": evidence.by},
        "agent_evidence": None if row.agent_evidence is None else {
            "text": row.agent_evidence.text, "start": row.agent_evidence.start,
            "end": row.agent_evidence.end, "origin": row.agent_evidence.origin},
    }


def _trace_answer(draft: AnswerDraft, current_keys: list[str]) -> dict:
    return {
        "created_at": draft.created_at, "drafter": draft.drafter, "label": draft.label,
        "drafted_by": display_name(draft.user) if draft.user_id else "",
        "sources": draft.sources, "sections": draft.sections, "dropped": draft.dropped,
        "decisions_changed_since": draft.source_keys != current_keys,
        "model": draft.model, "input_tokens": draft.input_tokens,
        "output_tokens": draft.output_tokens, "cost": draft.cost, "reply": draft.reply,
    }


Writer = Callable[[list[Citation], Investigation], str]


@dataclass(frozen=True)
class ExportFormat:
    """One export format: how to write it, and what the download is called and typed."""

    write: Writer
    content_type: str
    extension: str


FORMATS: dict[str, ExportFormat] = {
    "bibtex": ExportFormat(to_bibtex, "application/x-bibtex", "bib"),
    "ris": ExportFormat(to_ris, "application/x-research-info-systems", "ris"),
    "csl-json": ExportFormat(to_csl_json, "application/vnd.citationstyles.csl+json", "json"),
    "csv": ExportFormat(to_csv, "text/csv", "csv"),
    "markdown": ExportFormat(to_markdown, "text/markdown", "md"),
    "trace-json": ExportFormat(to_trace_json, "application/json", "trace.json"),
}


def render_export(investigation: Investigation, fmt: str,
                  selected: list[str] | None = None) -> tuple[str, str, str]:
    """Return (body, content type, file name) for one export format.

    ``selected`` exports only those sources (see `citations`); the file name says so.
    """
    if fmt not in FORMATS:
        raise ValueError(f"Unknown export format {fmt!r}")
    export_format = FORMATS[fmt]
    part = "-selection" if selected is not None else ""
    filename = f"trace-investigation-{investigation.pk}{part}.{export_format.extension}"
    body = export_format.write(citations(investigation, selected=selected), investigation)
    return body, export_format.content_type, filename
