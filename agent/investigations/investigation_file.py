"""An investigation as one file, to move a historian's work to another instance of TRACE.

The file is JSON: `{"format", "schema_version", "sha256", "payload"}`. `payload` holds the run
(question, settings, status, usage), its sub-questions and steps (the engine's events), every
verdict (the agent's and the historian's overrides), the model calls with their exact prompts and
replies, the notes, picked quotes, orders and answer drafts, with who and when; and the
`documents` and `chunks` it names, by document key, content hash and chunk range, so the
importing instance can find its own rows for them. `sha256` is the SHA-256 of the canonical
payload (`canonical_bytes`): a file edited by hand or damaged in transit is refused. It is no
signature (anyone can recompute it); what an import writes is checked field by field anyway.

This module writes the file and reads one back into checked, unsaved rows
(`read_investigation_file`); `services.py: investigation_import` matches the documents and
writes the rows.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

from django.core.exceptions import ValidationError
from django.db import models
from django.utils.dateparse import parse_datetime

from agent.engine.answer import sections_from_json
from agent.investigations.question_limits import NOTE_MAX_CHARS, question_problem
from agent.models import (
    AnswerDraft,
    DocumentNote,
    EvidencePick,
    Investigation,
    LLMCall,
    SourceOrder,
    Step,
    SubQuestion,
    Verdict,
)
from archive.models import Chunk
from archive.selectors import documents_by_keys
from common.user_text import text_problem

FORMAT = "trace-investigation"
# Bump when the payload's layout changes; a file of another version is refused, never guessed at.
SCHEMA_VERSION = 1
# The largest file `manage.py import_investigation` reads (the web form is held to the request
# gate's TRACE_MAX_REQUEST_BYTES first).
MAX_FILE_BYTES = 200_000_000

INVESTIGATION_FIELDS = (
    "question", "sub_corpus", "date_from", "date_to", "qid", "question_type", "gold_keys",
    "policy", "policy_label", "engine_settings", "models_used", "price_input_per_million",
    "price_output_per_million", "status", "error", "attempts", "created_at", "started_at",
    "finished_at", "ranked_keys", "llm_calls", "input_tokens", "output_tokens", "cached_tokens",
    "cost", "model_seconds", "engine_seconds",
)
SUB_QUESTION_FIELDS = ("index", "text", "target_sub_corpus", "entities", "target_date")
STEP_FIELDS = ("seq", "kind", "sub_question_index", "payload", "created_at")
VERDICT_FIELDS = ("sub_question_index", "chunk_id", "document_key", "sub_corpus", "decision",
                  "rationale", "auto_held", "source", "note", "evidence_start", "evidence_end",
                  "evidence_text", "created_at")
LLM_CALL_FIELDS = ("ordinal", "role", "prompt_hash", "model", "response", "succeeded",
                   "input_tokens", "output_tokens", "cached_tokens", "seconds", "created_at")
NOTE_FIELDS = ("document_key", "text", "created_at")
PICK_FIELDS = ("document_key", "start", "end", "text", "created_at")
ORDER_FIELDS = ("document_keys", "created_at")
DRAFT_FIELDS = ("created_at", "drafter", "sources", "sections", "dropped", "model",
                "input_tokens", "output_tokens", "cost", "reply")

# Where the engine's events name chunks by id: the importing instance's ids replace them.
CHUNK_ID_FIELDS: dict[str, tuple[str, ...]] = {
    "warm_start": ("chunk_ids",),
    "search": ("chunk_ids", "shown_chunk_ids"),
    "verdict": ("chunk_id",),
    "held_drop": ("chunk_id",),
    "held_reeval": ("promoted", "kept", "ignored"),
}
# A chunk the importing instance does not hold: no chunk has this id (ids start at 1).
NO_CHUNK = 0


class InvestigationFileError(ValueError):
    """A file that is not an investigation this instance can import; the message says why."""


def canonical_bytes(payload: Any) -> bytes:
    """The payload as the bytes its checksum is computed over (sorted keys, no spaces)."""
    return json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"),
                      allow_nan=False).encode("utf-8")


def payload_digest(payload: Any) -> str:
    return hashlib.sha256(canonical_bytes(payload)).hexdigest()


# -- writing ------------------------------------------------------------------------------------


def _plain(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, date):
        return value.isoformat()
    return value


def _row(obj: models.Model, names: Iterable[str]) -> dict[str, Any]:
    return {name: _plain(getattr(obj, name)) for name in names}


def _username(user) -> str | None:
    return user.get_username() if user is not None else None


def investigation_payload(investigation: Investigation) -> dict[str, Any]:
    """Everything the historian and the agent did in this investigation, as JSON-ready data."""
    steps = list(investigation.steps.order_by("seq"))
    verdicts = list(investigation.verdicts.select_related("user", "step").order_by("id"))
    calls = list(investigation.llm_call_records.select_related("system_prompt", "user_prompt")
                 .order_by("ordinal"))
    notes = list(investigation.notes.select_related("user").order_by("created_at", "id"))
    picks = list(investigation.evidence_picks.select_related("user").order_by("created_at", "id"))
    orders = list(investigation.source_orders.select_related("user").order_by("created_at", "id"))
    drafts = list(investigation.answer_drafts.select_related("user").order_by("created_at", "id"))

    chunk_ids = {v.chunk_id for v in verdicts if v.chunk_id}
    for step in steps:
        for name in CHUNK_ID_FIELDS.get(step.kind, ()):
            chunk_ids.update(_ids(step.payload.get(name)))
    chunks = list(Chunk.objects.filter(pk__in=chunk_ids).select_related("document__sub_corpus")
                  .only("pk", "ordinal", "char_start", "char_end", "document__external_id",
                        "document__sub_corpus__slug").order_by("pk"))
    keys = {c.document.key for c in chunks} | set(investigation.ranked_keys)
    keys |= {v.document_key for v in verdicts} | {n.document_key for n in notes}
    keys |= {p.document_key for p in picks}
    for order in orders:
        keys.update(order.document_keys)
    for draft in drafts:
        keys.update(draft.source_keys)
    documents = documents_by_keys(keys)

    return {
        "investigation": _row(investigation, INVESTIGATION_FIELDS),
        "documents": [{"key": key, "content_hash": documents[key].content_hash}
                      for key in sorted(documents)],
        "chunks": [{"id": c.pk, "document_key": c.document.key, "ordinal": c.ordinal,
                    "char_start": c.char_start, "char_end": c.char_end} for c in chunks],
        "sub_questions": [_row(s, SUB_QUESTION_FIELDS)
                          for s in investigation.sub_questions.order_by("index")],
        "steps": [_row(s, STEP_FIELDS) for s in steps],
        "verdicts": [{**_row(v, VERDICT_FIELDS), "step_seq": v.step.seq if v.step else None,
                      "user": _username(v.user)} for v in verdicts],
        "llm_calls": [{**_row(c, LLM_CALL_FIELDS),
                       "system_prompt": c.system_prompt.text if c.system_prompt else None,
                       "user_prompt": c.user_prompt.text if c.user_prompt else None}
                      for c in calls],
        "notes": [{**_row(n, NOTE_FIELDS), "user": _username(n.user)} for n in notes],
        "evidence_picks": [{**_row(p, PICK_FIELDS), "user": _username(p.user)} for p in picks],
        "source_orders": [{**_row(o, ORDER_FIELDS), "user": _username(o.user)} for o in orders],
        "answer_drafts": [{**_row(d, DRAFT_FIELDS), "user": _username(d.user)} for d in drafts],
    }


def investigation_file(investigation: Investigation) -> bytes:
    """The investigation as one versioned JSON file, its payload's SHA-256 beside it."""
    payload = investigation_payload(investigation)
    envelope = {"format": FORMAT, "schema_version": SCHEMA_VERSION,
                "sha256": payload_digest(payload), "payload": payload}
    return json.dumps(envelope, ensure_ascii=False, indent=1, allow_nan=False).encode("utf-8")


def file_name(investigation: Investigation) -> str:
    return f"investigation-{investigation.pk}.trace.json"


# -- reading ------------------------------------------------------------------------------------


@dataclass
class ImportedRows:
    """The checked, unsaved rows of a file, and the ids and names they refer to."""

    investigation: Investigation
    documents: dict[str, str]  # document key -> content hash on the exporting instance
    chunks: dict[int, tuple[str, int, int, int]]  # exported id -> (key, ordinal, start, end)
    sub_questions: list[SubQuestion] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)
    verdicts: list[tuple[Verdict, int | None, str | None]] = field(default_factory=list)
    llm_calls: list[tuple[LLMCall, str | None, str | None]] = field(default_factory=list)
    notes: list[tuple[DocumentNote, str | None]] = field(default_factory=list)
    picks: list[tuple[EvidencePick, str | None]] = field(default_factory=list)
    orders: list[tuple[SourceOrder, str | None]] = field(default_factory=list)
    drafts: list[tuple[AnswerDraft, str | None]] = field(default_factory=list)


def read_envelope(data: bytes) -> dict[str, Any]:
    """Check the file's envelope (format, version, checksum) and return its payload."""
    if len(data) > MAX_FILE_BYTES:
        raise InvestigationFileError(f"The file has {len(data):,} bytes; at most "
                                     f"{MAX_FILE_BYTES:,}.")
    try:
        envelope = json.loads(data.decode("utf-8"), parse_constant=_no_constant)
    except (UnicodeDecodeError, ValueError) as exc:
        raise InvestigationFileError(f"The file is not UTF-8 JSON ({exc}).") from exc
    if not isinstance(envelope, dict) or envelope.get("format") != FORMAT:
        raise InvestigationFileError("This is not a TRACE investigation file (its 'format' is "
                                     f"not {FORMAT!r}).")
    version = envelope.get("schema_version")
    if version != SCHEMA_VERSION:
        raise InvestigationFileError(
            f"The file is of schema version {version!r}; this instance reads version "
            f"{SCHEMA_VERSION} only. Export it again from an instance of the same version.")
    payload = envelope.get("payload")
    if not isinstance(payload, dict):
        raise InvestigationFileError("The file has no payload.")
    if envelope.get("sha256") != payload_digest(payload):
        raise InvestigationFileError("The file's checksum does not match its content: it was "
                                     "changed after it was exported (or damaged on the way).")
    _check_strings(payload)
    return payload


def _no_constant(name: str) -> None:
    raise ValueError(f"{name} is not a number JSON allows")


def _check_strings(value: Any, where: str = "the file") -> None:
    """Refuse text Postgres cannot store (NUL, lone surrogates), wherever it sits."""
    if isinstance(value, str):
        if problem := text_problem(value, label=where, max_chars=MAX_FILE_BYTES):
            raise InvestigationFileError(f"{problem[0].upper()}{problem[1:]}.")
    elif isinstance(value, dict):
        for key, item in value.items():
            _check_strings(key, where)
            _check_strings(item, where)
    elif isinstance(value, list):
        for item in value:
            _check_strings(item, where)


def _ids(value: Any) -> list[int]:
    if isinstance(value, bool):
        return []
    if isinstance(value, int):
        return [value]
    if isinstance(value, list | tuple):
        return [item for item in value if isinstance(item, int) and not isinstance(item, bool)]
    return []


def _cleaned(model: type[models.Model], data: Any, names: Iterable[str], where: str,
             extra: Iterable[str] = ()) -> dict[str, Any]:
    """Each named field of a row, converted and validated by the model field itself."""
    if not isinstance(data, dict):
        raise InvestigationFileError(f"{where}: expected an object.")
    names = tuple(names)
    expected = set(names) | set(extra)
    if missing := sorted(expected - set(data)):
        raise InvestigationFileError(f"{where}: missing {', '.join(missing)}.")
    if unknown := sorted(set(data) - expected):
        raise InvestigationFileError(f"{where}: unknown field {unknown[0]!r}.")
    values = {}
    for name in names:
        model_field = model._meta.get_field(name)
        assert isinstance(model_field, models.Field)  # the names are the model's own columns
        value = data[name]
        if isinstance(value, bool) and not isinstance(model_field, models.BooleanField):
            raise InvestigationFileError(f"{where}: {name}: a boolean is not allowed here.")
        if (isinstance(model_field, models.DateTimeField) and value is not None
                and (not isinstance(value, str) or parse_datetime(value) is None)):
            raise InvestigationFileError(f"{where}: {name}: not a date and time.")
        try:
            values[name] = model_field.clean(value, None)
        except ValidationError as exc:
            raise InvestigationFileError(f"{where}: {name}: {' '.join(exc.messages)}") from exc
    return values


def _user(data: dict, where: str) -> str | None:
    user = data.get("user")
    if user is not None and not isinstance(user, str):
        raise InvestigationFileError(f"{where}: user: expected a user name.")
    return user


def _list(payload: dict, name: str) -> list:
    value = payload.get(name)
    if not isinstance(value, list):
        raise InvestigationFileError(f"The payload's {name!r} is missing or not a list.")
    return value


def _text_check(value: str, *, label: str, max_chars: int) -> None:
    if problem := text_problem(value, label=label, max_chars=max_chars):
        raise InvestigationFileError(f"{problem[0].upper()}{problem[1:]}.")


def read_investigation_file(data: bytes) -> ImportedRows:
    """Check a whole file and return its rows unsaved; raise InvestigationFileError on any fault."""
    payload = read_envelope(data)
    fields = _cleaned(Investigation, payload.get("investigation"), INVESTIGATION_FIELDS,
                      "investigation")
    for name in ("gold_keys", "ranked_keys"):
        if not (isinstance(fields[name], list) and all(isinstance(k, str) for k in fields[name])):
            raise InvestigationFileError(f"investigation: {name}: not a list of document keys.")
    for name in ("engine_settings", "models_used"):
        if not isinstance(fields[name], dict):
            raise InvestigationFileError(f"investigation: {name}: not an object.")
    if problem := question_problem(question=fields["question"], qid=fields["qid"],
                                   question_type=fields["question_type"],
                                   gold_keys=fields["gold_keys"]):
        raise InvestigationFileError(f"{problem[0].upper()}{problem[1:]}.")
    if fields["status"] in Investigation.ACTIVE:
        raise InvestigationFileError(f"The run was still {fields['status']} when it was "
                                     "exported; export it again once it has ended.")
    rows = ImportedRows(investigation=Investigation(**fields), documents={}, chunks={})

    for i, item in enumerate(_list(payload, "documents")):
        if not (isinstance(item, dict) and isinstance(item.get("key"), str)
                and isinstance(item.get("content_hash"), str)):
            raise InvestigationFileError(f"documents[{i}]: expected a key and a content hash.")
        rows.documents[item["key"]] = item["content_hash"]
    for i, item in enumerate(_list(payload, "chunks")):
        where = f"chunks[{i}]"
        values = [item.get(n) if isinstance(item, dict) else None
                  for n in ("id", "ordinal", "char_start", "char_end")]
        numbers = [v for v in values if isinstance(v, int) and not isinstance(v, bool)]
        if len(numbers) != len(values):
            raise InvestigationFileError(f"{where}: expected integer id, ordinal and range.")
        key = item.get("document_key")
        if not isinstance(key, str) or key not in rows.documents:
            raise InvestigationFileError(f"{where}: its document is not among the documents.")
        chunk_id, ordinal, start, end = numbers
        rows.chunks[chunk_id] = (key, ordinal, start, end)

    for i, item in enumerate(_list(payload, "sub_questions")):
        rows.sub_questions.append(SubQuestion(**_cleaned(
            SubQuestion, item, SUB_QUESTION_FIELDS, f"sub_questions[{i}]")))
    seqs = set()
    for i, item in enumerate(_list(payload, "steps")):
        where = f"steps[{i}]"
        step = Step(**_cleaned(Step, item, STEP_FIELDS, where))
        if not isinstance(step.payload, dict):
            raise InvestigationFileError(f"{where}: its payload is not an object.")
        try:
            step.event  # noqa: B018  (reading it back checks the kind and its fields)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise InvestigationFileError(f"{where}: not an event of kind {step.kind!r} "
                                         f"({exc}).") from exc
        del step.event
        if step.seq in seqs:
            raise InvestigationFileError(f"{where}: step {step.seq} appears twice.")
        seqs.add(step.seq)
        rows.steps.append(step)
    for i, item in enumerate(_list(payload, "verdicts")):
        where = f"verdicts[{i}]"
        verdict = Verdict(**_cleaned(Verdict, item, VERDICT_FIELDS, where,
                                     extra=("step_seq", "user")))
        step_seq = item["step_seq"]
        if step_seq is not None and step_seq not in seqs:
            raise InvestigationFileError(f"{where}: it names step {step_seq!r}, which the file "
                                         "does not hold.")
        _text_check(verdict.note, label=f"{where}: the reason", max_chars=NOTE_MAX_CHARS)
        rows.verdicts.append((verdict, step_seq, _user(item, where)))
    for i, item in enumerate(_list(payload, "llm_calls")):
        where = f"llm_calls[{i}]"
        call = LLMCall(**_cleaned(LLMCall, item, LLM_CALL_FIELDS, where,
                                  extra=("system_prompt", "user_prompt")))
        prompts = item["system_prompt"], item["user_prompt"]
        if not all(p is None or isinstance(p, str) for p in prompts):
            raise InvestigationFileError(f"{where}: a prompt is not text.")
        rows.llm_calls.append((call, *prompts))
    for i, item in enumerate(_list(payload, "notes")):
        where = f"notes[{i}]"
        note = DocumentNote(**_cleaned(DocumentNote, item, NOTE_FIELDS, where, extra=("user",)))
        _text_check(note.text, label=f"{where}: the note", max_chars=NOTE_MAX_CHARS)
        rows.notes.append((note, _user(item, where)))
    for i, item in enumerate(_list(payload, "evidence_picks")):
        where = f"evidence_picks[{i}]"
        pick = EvidencePick(**_cleaned(EvidencePick, item, PICK_FIELDS, where, extra=("user",)))
        if not pick.start < pick.end:
            raise InvestigationFileError(f"{where}: the quote's range is empty.")
        rows.picks.append((pick, _user(item, where)))
    for i, item in enumerate(_list(payload, "source_orders")):
        where = f"source_orders[{i}]"
        order = SourceOrder(**_cleaned(SourceOrder, item, ORDER_FIELDS, where, extra=("user",)))
        if not (isinstance(order.document_keys, list)
                and all(isinstance(k, str) for k in order.document_keys)):
            raise InvestigationFileError(f"{where}: the order is not a list of document keys.")
        rows.orders.append((order, _user(item, where)))
    for i, item in enumerate(_list(payload, "answer_drafts")):
        where = f"answer_drafts[{i}]"
        draft = AnswerDraft(**_cleaned(AnswerDraft, item, DRAFT_FIELDS, where, extra=("user",)))
        try:
            # Read back and written again, a drafted answer is what it was: nothing more.
            typed = [section.to_json() for section in sections_from_json(draft.sections)]
            keys = draft.source_keys
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise InvestigationFileError(f"{where}: its sections or sources are not a "
                                         f"drafted answer ({exc}).") from exc
        if typed != draft.sections or not all(isinstance(key, str) for key in keys):
            raise InvestigationFileError(f"{where}: its sections or sources are not a "
                                         "drafted answer.")
        rows.drafts.append((draft, _user(item, where)))
    return rows


def remapped_payload(payload: Mapping[str, Any], kind: str,
                     chunk_id: Callable[[int], int]) -> dict[str, Any]:
    """A step's payload with its chunk ids replaced by `chunk_id(old)`."""
    result = dict(payload)
    for name in CHUNK_ID_FIELDS.get(kind, ()):
        value = result.get(name)
        if isinstance(value, list):
            result[name] = [chunk_id(item) if isinstance(item, int) else item for item in value]
        elif isinstance(value, int) and not isinstance(value, bool):
            result[name] = chunk_id(value)
    return result
