"""Writes that span investigation models: create, enqueue, cancel, resume, sweep, share, import."""

from __future__ import annotations

import dataclasses
import logging
import uuid
from collections.abc import Callable
from datetime import date, timedelta
from typing import Any

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db import DataError, IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from agent.engine.config import EngineConfig
from agent.engine.policy_spec import PolicySpec
from agent.investigations.chat import stored_prompt_text
from agent.investigations.durability import queued_task_ids, stale_after, with_reconnect
from agent.investigations.investigation_file import (
    NO_CHUNK,
    ImportedRows,
    InvestigationFileError,
    read_investigation_file,
    remapped_payload,
)
from agent.investigations.judge_learning import learning_of
from agent.investigations.judges import LEARNT, judge_in_use
from agent.investigations.question_limits import question_problem
from agent.investigations.tasks import execute_investigation
from agent.models import Batch, Investigation, SubQuestion
from agent.policies import (
    PolicyChoice,
    adjusted_config,
    chosen_policy,
    configured_policy,
    engine_config,
    require_usable_policy,
)
from archive.models import Chunk
from archive.selectors import documents_by_keys

logger = logging.getLogger(__name__)


class InvestigationError(ValueError):
    """A request about an investigation that cannot be honoured."""


def _judge_shift(owner, policy: PolicySpec) -> float | None:
    """The adaptation of the learnt judge to its owner's decisions, fixed for the whole run."""
    if policy.kind != PolicyChoice.OFFLINE or judge_in_use().kind != LEARNT:
        return None
    return learning_of(owner).shift


def investigation_create(
    *,
    owner,
    question: str,
    sub_corpus: str = "",
    date_from: date | None = None,
    date_to: date | None = None,
    batch: Batch | None = None,
    qid: str = "",
    question_type: str = "",
    gold_keys: list[str] | None = None,
    enqueue: bool = True,
    policy: PolicySpec | None = None,
    config: EngineConfig | None = None,
    rerun_of: Investigation | None = None,
) -> Investigation:
    """Create an investigation and queue it for a worker once the transaction commits.

    Without `policy` and `config`, it runs with this instance's policy and default settings.
    """
    question = question.strip()
    if not question:
        raise InvestigationError("The question is empty.")
    if problem := question_problem(question=question, qid=qid, question_type=question_type,
                                   gold_keys=gold_keys or ()):
        raise InvestigationError(problem[0].upper() + problem[1:] + ".")
    if date_from and date_to and date_from > date_to:
        raise InvestigationError("The start date is after the end date.")
    policy = policy or configured_policy()
    investigation = Investigation.objects.create(
        owner=owner, question=question, sub_corpus=sub_corpus or "", date_from=date_from,
        date_to=date_to, batch=batch, qid=qid, question_type=question_type,
        gold_keys=list(gold_keys or []), policy=policy.kind, policy_label=policy.label,
        models_used=policy.models, price_input_per_million=policy.price_input_per_million,
        price_output_per_million=policy.price_output_per_million,
        engine_settings=dataclasses.asdict(config or engine_config()), rerun_of=rerun_of,
        judge_shift=_judge_shift(owner, policy),
    )
    if enqueue:
        investigation_enqueue(investigation=investigation)
    return investigation


@dataclasses.dataclass(frozen=True)
class RunChoices:
    """What running an investigation again may change: policy, model, settings, restriction."""

    policy: str
    agent_model: str = ""
    settings: dict[str, int] = dataclasses.field(default_factory=dict)  # adjustable ones only
    sub_corpus: str = ""
    date_from: date | None = None
    date_to: date | None = None


def investigation_rerun(*, investigation: Investigation, owner, choices: RunChoices,
                        batch: Batch | None = None) -> Investigation:
    """Run the same question again with the historian's choices, linked to the first run.

    The new run keeps the question's id, type and gold documents (so both sides are scored
    alike); its engine settings are the first run's with the chosen ones changed.
    """
    if investigation.owner_id != owner.pk:
        raise InvestigationError("Only the owner of an investigation can run it again.")
    try:
        policy = chosen_policy(choices.policy, choices.agent_model)
        config = adjusted_config(investigation.engine_settings, choices.settings)
    except (ImproperlyConfigured, ValueError) as exc:
        raise InvestigationError(str(exc)) from exc
    return investigation_create(
        owner=owner, question=investigation.question, sub_corpus=choices.sub_corpus,
        date_from=choices.date_from, date_to=choices.date_to, batch=batch,
        qid=investigation.qid, question_type=investigation.question_type,
        gold_keys=investigation.gold_keys, policy=policy, config=config, rerun_of=investigation,
    )


def batch_rerun(*, batch: Batch, owner, choices: RunChoices, name: str = "") -> Batch:
    """Run every question of a batch again with the same choices, as a new linked batch."""
    if batch.owner_id != owner.pk:
        raise InvestigationError("Only the owner of a batch can run it again.")
    rerun = Batch.objects.create(owner=owner, rerun_of=batch,
                                 name=(name.strip() or f"{batch.name} (run again)")[:200])
    for investigation in batch.investigations.order_by("id"):
        investigation_rerun(investigation=investigation, owner=owner, choices=choices,
                            batch=rerun)
    return rerun


def investigation_enqueue(*, investigation: Investigation) -> None:
    """Send the run to a worker after commit (a rolled-back row is never run)."""
    investigation_id = investigation.pk
    transaction.on_commit(lambda: _send_run(investigation_id))


def _send_run(investigation_id: int) -> bool:
    """Put the run on the task queue; if the queue is unreachable, fail it (resumable)."""
    # The run knows its task's id, so the sweep can tell which runs have a task waiting.
    task_id = str(uuid.uuid4())
    with_reconnect(lambda: Investigation.objects.filter(pk=investigation_id).update(
        task_id=task_id))
    try:
        execute_investigation.apply_async(
            args=[investigation_id], queue=settings.TRACE_CELERY_QUEUE, task_id=task_id)
    except Exception as exc:  # the broker's errors vary by transport
        logger.warning("investigation %s could not be queued: %s", investigation_id, exc)
        message = ("The run could not be queued because the task queue did not answer "
                   f"({type(exc).__name__}). Resume it once the service is back.")
        with_reconnect(lambda: Investigation.objects.filter(pk=investigation_id).transition_to(
            Investigation.Status.FAILED, finished_at=timezone.now(), error=message,
        ))
        return False
    # A queued run is vouched for from now on; the sweep re-queues it if no worker takes it.
    with_reconnect(lambda: Investigation.objects.filter(
        pk=investigation_id, status=Investigation.Status.QUEUED,
    ).update(heartbeat_at=timezone.now()))
    return True


def investigation_is_stale(investigation: Investigation) -> bool:
    """Tell whether an active run has lost its worker (no heartbeat for too long)."""
    if not investigation.is_active:
        return False
    beat = investigation.heartbeat_at or investigation.created_at
    return timezone.now() - beat >= stale_after()


def investigation_cancel(*, investigation: Investigation) -> None:
    """Ask the running engine to stop at its next step; a queued or abandoned run stops at once."""
    if investigation.status == Investigation.Status.QUEUED or investigation_is_stale(investigation):
        Investigation.objects.filter(
            pk=investigation.pk, status__in=Investigation.ACTIVE,
        ).transition_to(
            Investigation.Status.CANCELLED, cancel_requested=True, finished_at=timezone.now(),
        )
    elif investigation.status == Investigation.Status.RUNNING:
        Investigation.objects.filter(pk=investigation.pk).update(cancel_requested=True)
    investigation.refresh_from_db()


def investigation_resume(*, investigation: Investigation) -> None:
    """Queue an interrupted, failed, cancelled or abandoned run again; paid replies are reused."""
    if not (investigation.can_resume or investigation_is_stale(investigation)):
        raise InvestigationError(f"An investigation that is {investigation.status} cannot resume.")
    try:
        require_usable_policy(investigation.policy)
    except ImproperlyConfigured as exc:
        raise InvestigationError(str(exc)) from exc
    Investigation.objects.filter(pk=investigation.pk).transition_to(
        Investigation.Status.QUEUED, cancel_requested=False, finished_at=None, error="",
        heartbeat_at=timezone.now(),
    )
    investigation.refresh_from_db()
    investigation_enqueue(investigation=investigation)


def investigations_mark_interrupted(*, stale_after_seconds: float | None = None) -> int:
    """Mark runs whose worker stopped sending heartbeats as interrupted (resumable)."""
    age = stale_after() if stale_after_seconds is None else timedelta(seconds=stale_after_seconds)
    cutoff = timezone.now() - age
    return Investigation.objects.filter(
        Q(heartbeat_at__lt=cutoff) | Q(heartbeat_at__isnull=True),
        status=Investigation.Status.RUNNING,
    ).transition_to(
        Investigation.Status.INTERRUPTED,
        error="Interrupted: the worker running it stopped (no heartbeat).",
    )


@dataclasses.dataclass(frozen=True)
class SweepResult:
    interrupted: int
    resumed: int
    requeued: int


def investigations_sweep() -> SweepResult:
    """Interrupt abandoned runs, resume them automatically, and re-queue lost queued runs."""
    interrupted = investigations_mark_interrupted()
    waiting = _waiting_investigation_ids()
    if waiting is None:
        # The broker is away: queued tasks are kept in it, and nothing can be sent now.
        return SweepResult(interrupted=interrupted, resumed=0, requeued=0)
    # A task waiting in the queue vouches for its run: the next free worker takes it.
    Investigation.objects.filter(pk__in=waiting, status=Investigation.Status.QUEUED).update(
        heartbeat_at=timezone.now())
    recent = timezone.now() - timedelta(days=1)
    resumable = Investigation.objects.filter(
        status=Investigation.Status.INTERRUPTED, cancel_requested=False,
        attempts__lt=settings.TRACE_AUTO_RESUME_ATTEMPTS, heartbeat_at__gte=recent,
    )
    resumed = 0
    for investigation in resumable:
        claimed = Investigation.objects.filter(
            pk=investigation.pk, status=Investigation.Status.INTERRUPTED,
        ).transition_to(Investigation.Status.QUEUED, error="", heartbeat_at=timezone.now())
        if claimed:
            resumed += _send_run(investigation.pk)
    cutoff = timezone.now() - stale_after()
    lost = Investigation.objects.filter(
        Q(heartbeat_at__lt=cutoff) | Q(heartbeat_at__isnull=True, created_at__lt=cutoff),
        status=Investigation.Status.QUEUED,
    ).exclude(pk__in=waiting).values_list("pk", flat=True)
    requeued = sum(_send_run(pk) for pk in lost)
    return SweepResult(interrupted=interrupted, resumed=resumed, requeued=requeued)


def _waiting_investigation_ids() -> set[int] | None:
    """Return the investigations whose task waits in the queue; None if Redis cannot be read."""
    try:
        task_ids = queued_task_ids(settings.TRACE_CELERY_QUEUE)
    except Exception as exc:  # Redis away (or another broker): nothing to decide on now
        logger.warning("cannot read the task queue: %s", exc)
        return None
    if not task_ids:
        return set()
    return set(Investigation.objects.filter(task_id__in=task_ids).values_list("pk", flat=True))


def investigation_share(*, investigation: Investigation, enable: bool = True) -> str:
    """Create the read-only share token (kept while sharing, so old links work) or revoke it."""
    token = (investigation.share_token or investigation.new_share_token()) if enable else ""
    investigation.share_token = token
    investigation.save(update_fields=["share_token"])
    return token


@dataclasses.dataclass(frozen=True)
class ImportResult:
    """An imported investigation and what of it this instance could not match."""

    investigation: Investigation
    # Document keys the file names that this archive lacks, or holds with another text.
    missing_documents: dict[str, str]
    unmatched_chunks: int
    # Who decided or wrote something in the file, with no account here of the importer's name.
    other_authors: list[str]


def investigation_import(*, owner, data: bytes) -> ImportResult:
    """Import an investigation file (`investigation_file.py`) as a new run of `owner`'s.

    Documents are matched by key and content hash and chunks by ordinal and range inside them, so
    every offset the file holds means the same text here; a document this archive lacks (or holds
    with another text) is reported and its chunks named by no id, never invented. Rows by the
    importer's own user name are theirs; rows by anyone else keep no author here. All or
    nothing: a faulty file raises `InvestigationFileError` and writes nothing.
    """

    rows = read_investigation_file(data)
    found = documents_by_keys(rows.documents)
    missing = {}
    for key, content_hash in sorted(rows.documents.items()):
        if key not in found:
            missing[key] = "not in this archive"
        elif found[key].content_hash != content_hash:
            missing[key] = "its text differs in this archive"
    matched = {key: doc.pk for key, doc in found.items() if key not in missing}
    here = {(c["document_id"], c["ordinal"], c["char_start"], c["char_end"]): c["pk"]
            for c in Chunk.objects.filter(document_id__in=matched.values())
            .values("pk", "document_id", "ordinal", "char_start", "char_end")}
    chunk_map = {}
    for old, (key, ordinal, start, end) in rows.chunks.items():
        document_id = matched.get(key)
        new = None if document_id is None else here.get((document_id, ordinal, start, end))
        if new is not None:
            chunk_map[old] = new
    unmatched = len(rows.chunks) - len(chunk_map)
    username = owner.get_username()
    others: set[str] = set()

    def author(name: str | None):
        if name is None:
            return None
        if name == username:
            return owner
        others.add(name)
        return None

    try:
        with transaction.atomic():
            investigation = _imported(rows, owner=owner, chunk_map=chunk_map, author=author)
    except (IntegrityError, DataError) as exc:
        # Rows the checks let through but the database refuses (two sub-questions of one
        # index, two model calls of one ordinal): the transaction wrote nothing.
        first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InvestigationFileError(
            f"The file's rows contradict each other ({first_line}).") from exc
    return ImportResult(investigation=investigation, missing_documents=missing,
                        unmatched_chunks=unmatched, other_authors=sorted(others))


def _imported(rows: ImportedRows, *, owner, chunk_map: dict[int, int],
              author: Callable[[str | None], Any]) -> Investigation:
    """Write the checked rows of an investigation file as a new investigation of `owner`'s."""

    def saved(objects: list, fields: list[str]) -> None:
        """Restore what auto_now_add overwrote on create: each row's own time."""
        times = [obj.created_at for obj in objects]
        created = type(objects[0]).objects.bulk_create(objects) if objects else []
        for obj, moment in zip(created, times, strict=True):
            obj.created_at = moment
        if created:
            type(objects[0]).objects.bulk_update(created, fields, batch_size=500)

    investigation = rows.investigation
    created_at = investigation.created_at
    investigation.owner = owner
    investigation.save()
    Investigation.objects.filter(pk=investigation.pk).update(created_at=created_at)
    investigation.created_at = created_at
    for sub_question in rows.sub_questions:
        sub_question.investigation = investigation
    SubQuestion.objects.bulk_create(rows.sub_questions)
    for step in rows.steps:
        step.investigation = investigation
        step.payload = remapped_payload(step.payload, step.kind,
                                        lambda old: chunk_map.get(old, NO_CHUNK))
    saved(rows.steps, ["created_at"])
    step_ids = {step.seq: step.pk for step in rows.steps}
    verdicts = []
    for verdict, step_seq, user in rows.verdicts:
        verdict.investigation = investigation
        verdict.step_id = step_ids[step_seq] if step_seq is not None else None
        verdict.chunk_id = chunk_map.get(verdict.chunk_id) if verdict.chunk_id else None
        verdict.user = author(user)
        verdicts.append(verdict)
    saved(verdicts, ["created_at"])
    calls = []
    for call, system_prompt, user_prompt in rows.llm_calls:
        call.investigation = investigation
        call.system_prompt = (stored_prompt_text(system_prompt)
                              if system_prompt is not None else None)
        call.user_prompt = stored_prompt_text(user_prompt) if user_prompt is not None else None
        calls.append(call)
    saved(calls, ["created_at"])
    for group in (rows.notes, rows.picks, rows.orders, rows.drafts):
        objects = []
        for obj, user in group:
            obj.investigation = investigation
            obj.user = author(user)
            objects.append(obj)
        saved(objects, ["created_at"])
    return investigation

