"""Importers for JSON Lines corpora: the shared evaluation layout and official HistoriQA."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

from archive.importers.records import (
    DocumentRecord,
    RecordError,
    date_from_parts,
    iiif_value,
    parse_date,
    require_str,
    sub_corpus_info,
)
from archive.titles import debate_title, item_headings, raw_title, section_parts
from common.document_keys import document_key, split_document_key
from common.french_dates import format_french_date
from common.jsonl import json_file_objects


def _heading(text: str, limit: int = 120) -> str:
    """Return a section heading: the leading upper-case words, else the start of the text."""
    lines = [ln.strip() for ln in text.splitlines()]
    first = next((ln for ln in lines if sum(c.isalpha() for c in ln) >= 3), text.strip())
    # OCR often runs the heading into the first speech: "RÉPUBLIQUE M. le président. …"
    upper: list[str] = []
    for word in first.split():
        if any(c.islower() for c in word):
            break
        upper.append(word)
    while upper and len(upper[-1].strip(".,:;")) <= 2:
        upper.pop()
    if len(upper) >= 2:
        first = " ".join(upper).rstrip(".,:; ")
    return first if len(first) <= limit else first[: limit - 1].rstrip() + "…"


def _raw_id_of(doc_id: object) -> str | None:
    """Return the external id inside a `collection:raw_id` doc_id, or None."""
    if not isinstance(doc_id, str):
        return None
    try:
        return split_document_key(doc_id)[1]
    except ValueError:
        return None


def shared_record(row: dict, line: int) -> DocumentRecord:
    """Map one `{doc_id, collection, source, raw_id, date, text}` line to a record."""
    collection = require_str(row, "collection", line)
    doc_id = row.get("doc_id")
    raw_id = _raw_id_of(doc_id) if "raw_id" not in row else None
    if raw_id is None:
        raw_id = require_str(row, "raw_id", line)
    if isinstance(doc_id, str) and doc_id != document_key(collection, raw_id):
        raise RecordError(line, f"doc_id {doc_id!r} is not {document_key(collection, raw_id)}")
    text = require_str(row, "text", line)
    source = require_str(row, "source", line, allow_empty=True) if "source" in row else ""
    date, precision = parse_date(row.get("date"), line)
    info = sub_corpus_info(collection, source)
    record = DocumentRecord(
        line=line, sub_corpus=info, external_id=raw_id.strip(), text=text,
        publication=source or info.name, date=date, date_precision=precision,
        iiif_url=iiif_value(row.get("iiif"), line),
    )
    debate = section_parts(record.external_id)
    when = format_french_date(date, precision)
    if info.genre == "debates" and debate:
        _, sitting, section = debate
        record.page = f"séance {sitting}, section {section}"
        record.metadata = {"sitting": sitting, "section": section, "raw_title": raw_title(text)}
        record.title = debate_title(when=when, text=text, section=section)
    else:
        record.title = ", ".join(p for p in (record.publication, when) if p)
    return record


def _segments_text(document, line: int) -> str:
    if isinstance(document, str):
        return document
    if isinstance(document, list):
        parts = []
        for segment in document:
            if isinstance(segment, dict):
                segment = segment.get("text")
            if not isinstance(segment, str):
                raise RecordError(line, "field 'document' segments must be strings")
            parts.append(segment.strip())
        return "\n\n".join(p for p in parts if p)
    raise RecordError(line, f"field 'document' must be a string or a list of segments, "
                            f"got {type(document).__name__}")


def historiqa_record(row: dict, line: int) -> DocumentRecord:
    """Map one official HistoriQA `corpus_dataset.jsonl` line to a record."""
    collection = require_str(row, "collection", line)
    external_id = require_str(row, "id", line)
    if "document" not in row:
        raise RecordError(line, "missing field 'document'")
    text = _segments_text(row["document"], line)
    if not text.strip():
        raise RecordError(line, "field 'document' is empty")
    date, precision = date_from_parts(row.get("year"), row.get("month"), row.get("day"), line)
    chamber = row.get("chamber")
    info = sub_corpus_info(
        collection, str(row.get("source") or ""), "debates" if chamber else None
    )
    sommaire = row.get("sommaire")
    metadata = {
        k: v for k, v in row.items()
        if k not in {"collection", "id", "document", "year", "month", "day", "iiif"}
        and isinstance(v, str | int | float | bool | list | dict | type(None))
    }
    publication = str(row.get("source") or info.name)
    if isinstance(sommaire, str) and sommaire.strip():
        title = f"{format_french_date(date, precision)}: {_heading(sommaire)}".lstrip(": ")
    else:
        title = ", ".join(p for p in (publication, format_french_date(date, precision)) if p)
    return DocumentRecord(
        line=line, sub_corpus=info, external_id=external_id.strip(), text=text, title=title,
        publication=publication, date=date, date_precision=precision,
        page=str(row.get("page") or ""), url=str(row.get("url") or row.get("ark") or ""),
        iiif_url=iiif_value(row.get("iiif"), line), metadata=metadata,
    )


def iter_jsonl(
    path: Path, fmt: str, headings: dict[str, dict[str, str]] | None = None
) -> Iterator[DocumentRecord | RecordError]:
    """Yield a record or an error for every non-blank line of ``path``, one line at a time.

    ``headings`` (sub-corpus slug -> item -> heading, from ``debate_headings``) titles the debate
    sections that have no heading of their own; without it they keep their own title.
    """
    mapper = shared_record if fmt == "shared" else historiqa_record
    for line, row, problem in json_file_objects(path):
        if row is None:
            yield RecordError(line, problem)
            continue
        try:
            record = mapper(row, line)
        except RecordError as exc:
            yield exc
            continue
        if headings:
            _title_by_item_heading(record, headings.get(record.sub_corpus.slug, {}))
        yield record


def debate_headings(records: Iterable[DocumentRecord]) -> dict[str, dict[str, str]]:
    """Map sub-corpus slug -> debate item -> the heading of its first section."""
    by_slug: dict[str, dict[str, str]] = {}
    for record in records:
        if record.sub_corpus.genre == "debates" and "section" in record.metadata:
            by_slug.setdefault(record.sub_corpus.slug, {}).update(
                item_headings([(record.external_id, record.text)])
            )
    return by_slug


def read_jsonl(path: Path, fmt: str) -> list[DocumentRecord | RecordError]:
    """Return a record or an error for every non-blank line of ``path`` (two passes)."""
    headings = debate_headings(r for r in iter_jsonl(path, fmt) if isinstance(r, DocumentRecord))
    return list(iter_jsonl(path, fmt, headings))


def _title_by_item_heading(record: DocumentRecord, headings: dict[str, str]) -> None:
    """Give a debate section without a heading of its own the heading of its item."""
    if record.sub_corpus.genre != "debates" or "section" not in record.metadata:
        return
    parts = section_parts(record.external_id)
    if parts and parts[2] != 0 and parts[0] in headings:
        record.title = debate_title(
            when=format_french_date(record.date, record.date_precision), text=record.text,
            section=parts[2], item_heading=headings[parts[0]],
        )


def detect_jsonl_format(path: Path) -> str:
    """Guess "shared" or "historiqa" from the first JSON object of ``path``."""
    for _, row, _ in json_file_objects(path):
        if row is not None:
            if "document" in row or ("id" in row and "raw_id" not in row):
                return "historiqa"
            return "shared"
    return "shared"
