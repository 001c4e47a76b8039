"""Export reviewed sources as BibTeX, RIS, CSL-JSON, CSV or Markdown, and the full trace."""

from __future__ import annotations

import csv
import io
import json
import re
from dataclasses import dataclass

from django.utils import timezone

from agent.engine.events import ModelCalled
from agent.models import Investigation
from agent.selectors import Source, review_sources

QUOTE_CHARS = 400
FORMATS = {
    "bibtex": ("application/x-bibtex", "bib"),
    "ris": ("application/x-research-info-systems", "ris"),
    "csl-json": ("application/vnd.citationstyles.csl+json", "json"),
    "csv": ("text/csv", "csv"),
    "markdown": ("text/markdown", "md"),
    "trace-json": ("application/json", "trace.json"),
}


@dataclass
class Citation:
    """The archival fields of one cited source."""

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
    quote: str
    quote_span: str
    rationale: str
    confirmations: int
    notes: str
    policy: str


def citations(investigation: Investigation, *, include_held: bool = False) -> list[Citation]:
    """Build citations for the accepted sources (and held ones on request), in ranked order."""
    from archive.models import Chunk

    wanted = {"accepted", "held"} if include_held else {"accepted"}
    rows = [s for s in review_sources(investigation) if s.state in wanted]
    chunks = Chunk.objects.in_bulk([s.best_chunk for s in rows if s.best_chunk])
    return [_citation(row, chunks.get(row.best_chunk), investigation.policy_label) for row in rows]


def _citation(source: Source, chunk, policy: str) -> Citation:
    doc = source.document
    quote = " ".join(chunk.text.split())[:QUOTE_CHARS] if chunk is not None else ""
    return Citation(
        key=source.document_key,
        rank=source.rank,
        state=source.state,
        title=getattr(doc, "title", "") or source.document_key,
        publication=getattr(doc, "publication", "") or "",
        sub_corpus=source.sub_corpus,
        genre=doc.sub_corpus.genre if doc is not None else "",
        date=doc.date.isoformat() if doc is not None and doc.date else "",
        page=getattr(doc, "page", "") or "",
        url=getattr(doc, "url", "") or "",
        quote=quote,
        quote_span=f"{chunk.char_start}-{chunk.char_end}" if chunk is not None else "",
        rationale=" | ".join(source.rationales),
        confirmations=source.confirmations,
        notes=" | ".join(note.text for note in source.notes),
        policy=policy,
    )


def _bibtex_key(citation: Citation) -> str:
    return re.sub(r"[^A-Za-z0-9_-]+", "_", citation.key).strip("_") or "source"


def to_bibtex(items: list[Citation]) -> str:
    from bibtexparser import Library, write_string
    from bibtexparser.model import Entry, Field

    library = Library()
    for item in items:
        fields = {
            "title": item.title,
            "journal" if item.genre == "press" else "howpublished": item.publication,
            "date": item.date,
            "year": item.date[:4],
            "pages" if item.genre == "press" else "note": item.page,
            "url": item.url,
            "annote": item.rationale,
            "abstract": item.quote,
            "keywords": item.sub_corpus,
            "addendum": f"TRACE source {item.key}; evidence chars {item.quote_span}",
        }
        entry_type = "article" if item.genre == "press" else "misc"
        library.add(Entry(entry_type, _bibtex_key(item),
                          [Field(k, _bibtex_escape(v)) for k, v in fields.items() if v]))
    return write_string(library)


def _bibtex_escape(value: str) -> str:
    # Braces delimit BibTeX values; unbalanced ones in OCR text would break the file.
    return value.replace("\\", "/").replace("{", "(").replace("}", ")")


def to_ris(items: list[Citation]) -> str:
    import rispy

    entries = []
    for item in items:
        entry = {
            "type_of_reference": "NEWS" if item.genre == "press" else "HEAR",
            "id": item.key,
            "title": item.title,
            "secondary_title": item.publication,
            "date": item.date.replace("-", "/"),
            "year": item.date[:4],
            "urls": [item.url] if item.url else [],
            "notes": [n for n in (item.rationale, item.notes) if n],
            "abstract": item.quote,
            "keywords": [item.sub_corpus],
            "start_page": item.page,
        }
        entries.append({k: v for k, v in entry.items() if v})
    return rispy.dumps(entries)


def to_csl_json(items: list[Citation]) -> str:
    records = []
    for item in items:
        record: dict = {
            "id": item.key,
            "type": "article-newspaper" if item.genre == "press" else "hearing",
            "title": item.title,
            "container-title": item.publication,
            "note": item.rationale,
            "abstract": item.quote,
            "archive_location": item.key,
        }
        if item.date:
            record["issued"] = {"date-parts": [[int(p) for p in item.date.split("-")]]}
        if item.url:
            record["URL"] = item.url
        if item.page:
            record["section" if item.genre != "press" else "page"] = item.page
        records.append(record)
    return json.dumps(records, ensure_ascii=False, indent=2)


CSV_COLUMNS = ["rank", "state", "key", "title", "publication", "sub_corpus", "date", "page",
               "url", "quote", "quote_span", "rationale", "confirmations", "notes", "policy"]


def to_csv(items: list[Citation]) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=CSV_COLUMNS, extrasaction="ignore")
    writer.writeheader()
    for item in items:
        writer.writerow({column: _csv_cell(getattr(item, column)) for column in CSV_COLUMNS})
    return buffer.getvalue()


def _csv_cell(value):
    # OCR text starting with = + - @ would run as a formula when a spreadsheet opens the file.
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@"):
        return "'" + value
    return value


def to_markdown(investigation: Investigation, items: list[Citation]) -> str:
    lines = [f"# Sources: {investigation.question}", "",
             f"Found by TRACE ({investigation.policy_label}), exported "
             f"{timezone.now():%Y-%m-%d %H:%M}.", ""]
    for position, item in enumerate(items, start=1):
        where = ", ".join(p for p in (item.publication, item.date, item.page) if p)
        lines.append(f"{position}. **{_md(item.title)}** — {_md(where)} (`{item.key}`)")
        if item.url:
            lines.append(f"   <{item.url}>")
        if item.rationale:
            lines.append(f"   - Why: {_md(item.rationale)}")
        if item.quote:
            lines.append(f"   - Evidence (chars {item.quote_span}): > {_md(item.quote)}")
        if item.notes:
            lines.append(f"   - Notes: {_md(item.notes)}")
    return "\n".join(lines) + "\n"


def _md(text: str) -> str:
    return re.sub(r"([\\`*_\[\]<>#|])", r"\\\1", text)


def to_trace_json(investigation: Investigation) -> str:
    """Everything needed to reproduce and audit the run: settings, model, prompts, every step,
    and every paid model reply."""
    rows = list(investigation.steps.order_by("seq"))
    events = [row.event for row in rows]
    steps = [{"seq": event.seq, "kind": event.kind, "subquestion": event.subquestion,
              "payload": event.payload(), "created_at": row.created_at}
             for row, event in zip(rows, events, strict=True)]
    prompts = sorted({(e.prompt_name, e.prompt_hash) for e in events if isinstance(e, ModelCalled)})
    replies = list(investigation.llm_call_records.order_by("ordinal").values(
        "ordinal", "role", "prompt_hash", "model", "response", "input_tokens", "output_tokens",
        "cached_tokens", "seconds", "created_at"))
    overrides = list(investigation.verdicts.filter(source="human").values(
        "document_key", "decision", "note", "user__username", "created_at"))
    notes = list(investigation.notes.values("document_key", "text", "user__username",
                                            "created_at"))
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
        "ranked_ids": investigation.ranked_ids,
        "usage": {"llm_calls": investigation.llm_calls,
                  "input_tokens": investigation.input_tokens,
                  "output_tokens": investigation.output_tokens,
                  "cached_tokens": investigation.cached_tokens, "cost": investigation.cost,
                  "model_seconds": investigation.model_seconds,
                  "engine_seconds": investigation.engine_seconds},
        "steps": steps,
        "model_replies": replies,
        "overrides": overrides,
        "notes": notes,
        "created_at": investigation.created_at,
        "finished_at": investigation.finished_at,
    }
    return json.dumps(data, ensure_ascii=False, indent=2, default=str)


def render_export(investigation: Investigation, fmt: str) -> tuple[str, str, str]:
    """Return (body, content type, file name) for one export format."""
    if fmt not in FORMATS:
        raise ValueError(f"Unknown export format {fmt!r}")
    content_type, extension = FORMATS[fmt]
    if fmt == "trace-json":
        body = to_trace_json(investigation)
    else:
        items = citations(investigation)
        body = {
            "bibtex": to_bibtex,
            "ris": to_ris,
            "csl-json": to_csl_json,
            "csv": to_csv,
        }[fmt](items) if fmt != "markdown" else to_markdown(investigation, items)
    return body, content_type, f"trace-investigation-{investigation.pk}.{extension}"
