"""Investigation models: the question, its sub-questions, append-only steps, verdicts, LLM calls."""

from __future__ import annotations

import secrets
from functools import cached_property

from django.conf import settings
from django.db import models
from django.utils import timezone

from agent.engine.answer import (
    DRAFTER_LABELS,
    AnswerDrafter,
    AnswerSection,
    dropped_line,
    sections_from_json,
)
from agent.engine.events import Event, event_from_json
from agent.engine.policy_spec import OFFLINE_LABEL, PolicyKind, PolicySpec
from agent.policies import PolicyChoice, configured_policy
from common.usage import TokenUsage


class Batch(models.Model):
    """Questions submitted together (an uploaded JSONL/CSV); each becomes an investigation."""

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                              related_name="batches")
    name = models.CharField(max_length=200)
    created_at = models.DateTimeField(auto_now_add=True)
    # The batch this one runs again (same questions, other policy, model, settings or restriction).
    rerun_of = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL,
                                 related_name="reruns")

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return self.name


class IllegalTransition(ValueError):
    """A run was asked to move to a status it may not reach from its own."""


class InvestigationQuerySet(models.QuerySet):
    def transition_to(self, new: str, **fields) -> int:
        """Move the selected runs that may reach `new` there in one UPDATE; return how many moved.

        The status condition is part of the UPDATE, so two processes racing for the same run
        (a claim, a cancel, the sweep) cannot both win: the loser moves no row.
        """
        sources = Investigation.sources_of(new)
        return self.filter(status__in=sources).update(status=new, **fields)


class Investigation(models.Model):
    class Status(models.TextChoices):
        QUEUED = "queued", "queued"
        RUNNING = "running", "running"
        FINISHED = "finished", "finished"
        CANCELLED = "cancelled", "cancelled"
        INTERRUPTED = "interrupted", "interrupted"
        FAILED = "failed", "failed"

    ACTIVE = (Status.QUEUED, Status.RUNNING)
    # The run's life, as data: each status and the statuses it may move to.
    TRANSITIONS: dict[str, frozenset[str]] = {
        # queued: a worker claims it, the historian cancels it, the queue refuses it, or a
        # stale queued run is queued again.
        Status.QUEUED: frozenset({Status.RUNNING, Status.CANCELLED, Status.FAILED, Status.QUEUED}),
        # running: it ends (finished, cancelled, failed), loses its worker or database
        # (interrupted), is taken over by a new attempt, or, once stale, is queued again.
        Status.RUNNING: frozenset({Status.FINISHED, Status.CANCELLED, Status.FAILED,
                                   Status.INTERRUPTED, Status.RUNNING, Status.QUEUED}),
        # interrupted and failed runs resume (queued again, or claimed by a redelivered task).
        Status.INTERRUPTED: frozenset({Status.QUEUED, Status.RUNNING}),
        Status.FAILED: frozenset({Status.QUEUED, Status.RUNNING}),
        # a cancelled run resumes only through the queue; a finished run is final.
        Status.CANCELLED: frozenset({Status.QUEUED}),
        Status.FINISHED: frozenset(),
    }

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                              related_name="investigations")
    batch = models.ForeignKey(Batch, null=True, blank=True, on_delete=models.SET_NULL,
                              related_name="investigations")
    question = models.TextField()
    sub_corpus = models.CharField(max_length=100, blank=True,
                                  help_text="restrict to one sub-corpus")
    date_from = models.DateField(null=True, blank=True)
    date_to = models.DateField(null=True, blank=True)
    qid = models.CharField(max_length=200, blank=True, help_text="question id from a batch file")
    question_type = models.CharField(max_length=100, blank=True)
    gold_keys = models.JSONField(default=list, blank=True)

    policy = models.CharField(max_length=20, choices=PolicyChoice.choices,
                              default=PolicyChoice.OFFLINE)
    policy_label = models.CharField(max_length=200, default=OFFLINE_LABEL)
    engine_settings = models.JSONField(default=dict, blank=True)
    models_used = models.JSONField(default=dict, blank=True, help_text="model name per role")
    # The prices the run was created with; null on runs recorded before prices were stored.
    price_input_per_million = models.FloatField(null=True, blank=True)
    price_output_per_million = models.FloatField(null=True, blank=True)

    status = models.CharField(max_length=20, choices=Status.choices, default=Status.QUEUED)
    cancel_requested = models.BooleanField(default=False)
    error = models.TextField(blank=True)
    attempts = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    task_id = models.CharField(max_length=64, blank=True, help_text="id of the latest task sent")

    ranked_keys = models.JSONField(default=list, blank=True)
    llm_calls = models.PositiveIntegerField(default=0)
    input_tokens = models.PositiveBigIntegerField(default=0)
    output_tokens = models.PositiveBigIntegerField(default=0)
    cached_tokens = models.PositiveBigIntegerField(default=0)
    cost = models.FloatField(default=0.0)
    model_seconds = models.FloatField(default=0.0)
    engine_seconds = models.FloatField(default=0.0)

    share_token = models.CharField(max_length=64, blank=True, db_index=True)
    # The investigation this one runs again (same question, other policy, model, settings or
    # restriction); the comparison page sets the two side by side.
    # The log-odds shift of the learnt judge this run used (the historian's adaptation), kept so
    # a resumed run judges as it began; None when no adaptation applied.
    judge_shift = models.FloatField(null=True, blank=True)
    rerun_of = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL,
                                 related_name="reruns")

    objects = InvestigationQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["owner", "-created_at"]), models.Index(fields=["status"])]

    def __str__(self) -> str:
        return self.question[:80]

    @property
    def usage(self) -> TokenUsage:
        """Return the run's token usage, from its three stored counts."""
        return TokenUsage(self.input_tokens, self.output_tokens, self.cached_tokens)

    @property
    def policy_spec(self) -> PolicySpec:
        """Return the policy this run was created with, at the prices stored on it.

        A run recorded before prices were stored on it is priced with this instance's prices.
        """
        configured = configured_policy()
        input_price, output_price = self.price_input_per_million, self.price_output_per_million
        return PolicySpec(
            PolicyKind(self.policy), dict(self.models_used),
            price_input_per_million=(configured.price_input_per_million if input_price is None
                                     else input_price),
            price_output_per_million=(configured.price_output_per_million
                                      if output_price is None else output_price),
        )

    @classmethod
    def sources_of(cls, new: str) -> tuple[str, ...]:
        """Return the statuses from which a run may move to `new`."""
        return tuple(old for old, targets in cls.TRANSITIONS.items() if new in targets)

    def may_move_to(self, new: str) -> bool:
        """Tell whether this run may move from its status to `new`."""
        return new in self.TRANSITIONS.get(self.status, frozenset())

    def transition_to(self, new: str, **fields) -> None:
        """Move this run to `new`, saving the given fields with it; refuse an illegal move."""
        if not self.may_move_to(new):
            allowed = ", ".join(sorted(self.TRANSITIONS.get(self.status, ()))) or "nothing"
            raise IllegalTransition(f"Investigation {self.pk} cannot go from {self.status} to "
                                    f"{new}; from {self.status} it may go to {allowed}.")
        self.status = new
        for name, value in fields.items():
            setattr(self, name, value)
        self.save(update_fields=["status", *fields])

    @property
    def is_active(self) -> bool:
        return self.status in self.ACTIVE

    @property
    def can_resume(self) -> bool:
        return self.status in (self.Status.INTERRUPTED, self.Status.FAILED, self.Status.CANCELLED)

    @property
    def elapsed_seconds(self) -> float | None:
        if not self.started_at:
            return None
        end = self.finished_at or timezone.now()
        return (end - self.started_at).total_seconds()

    def new_share_token(self) -> str:
        self.share_token = secrets.token_urlsafe(24)
        return self.share_token


class SubQuestion(models.Model):
    """A sub-question as it was run; its plan, briefing and finish reason live in its steps."""

    investigation = models.ForeignKey(Investigation, on_delete=models.CASCADE,
                                      related_name="sub_questions")
    index = models.PositiveIntegerField()
    text = models.TextField()
    target_sub_corpus = models.CharField(max_length=100, blank=True)
    entities = models.JSONField(default=list, blank=True)
    target_date = models.CharField(max_length=20, blank=True)

    class Meta:
        ordering = ["investigation_id", "index"]
        constraints = [
            models.UniqueConstraint(fields=["investigation", "index"], name="subquestion_index")
        ]


class Step(models.Model):
    """One engine event, persisted append-only in the order the engine emitted it.

    `kind`, `seq` and `sub_question_index` are the event's envelope; `payload` holds its own fields
    (`Event.payload()`); `event` reads the row back as its typed event.
    """

    investigation = models.ForeignKey(Investigation, on_delete=models.CASCADE,
                                      related_name="steps")
    seq = models.PositiveIntegerField()
    kind = models.CharField(max_length=30)
    sub_question_index = models.IntegerField(null=True, blank=True)
    payload = models.JSONField(default=dict)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["investigation_id", "seq"]
        constraints = [models.UniqueConstraint(fields=["investigation", "seq"], name="step_seq")]

    @classmethod
    def from_event(cls, investigation: Investigation, event: Event) -> Step:
        """Build (unsaved) the row that stores one event."""
        return cls(investigation=investigation, seq=event.seq, kind=event.kind,
                   sub_question_index=event.sub_question_index, payload=event.payload())

    @cached_property
    def event(self) -> Event:
        """Return the stored event, typed."""
        return event_from_json({**self.payload, "kind": self.kind, "seq": self.seq,
                                "sub_question_index": self.sub_question_index})


class Verdict(models.Model):
    """A verdict on a chunk (by the agent) or on a document (by a historian), never overwritten."""

    class Decision(models.TextChoices):
        ACCEPT = "accept", "accept"
        REJECT = "reject", "reject"
        HOLD = "hold", "hold"

    class Origin(models.TextChoices):
        AGENT = "agent", "agent"
        AUTO = "auto", "automatic (date widening)"
        HELD_REEVAL = "held_reeval", "held re-evaluation"
        HUMAN = "human", "historian"

    investigation = models.ForeignKey(Investigation, on_delete=models.CASCADE,
                                      related_name="verdicts")
    step = models.ForeignKey(Step, null=True, blank=True, on_delete=models.CASCADE,
                             related_name="verdicts")
    sub_question_index = models.IntegerField(null=True, blank=True)
    chunk_id = models.BigIntegerField(null=True, blank=True)
    document_key = models.CharField(max_length=400)
    sub_corpus = models.CharField(max_length=100, blank=True)
    decision = models.CharField(max_length=10, choices=Decision.choices)
    rationale = models.TextField(blank=True)
    auto_held = models.BooleanField(default=False)
    source = models.CharField(max_length=20, choices=Origin.choices, default=Origin.AGENT)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                             on_delete=models.SET_NULL)
    note = models.TextField(blank=True)
    # The passage that justifies the verdict: character offsets into the document's text.
    evidence_start = models.PositiveIntegerField(null=True, blank=True)
    evidence_end = models.PositiveIntegerField(null=True, blank=True)
    evidence_text = models.TextField(blank=True)
    # The learnt judge's probability that the document answers the question (agent verdicts
    # decided by the model; None for the rules and for historians).
    probability = models.FloatField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["investigation_id", "id"]
        indexes = [models.Index(fields=["investigation", "document_key"])]


class JudgeLearning(models.Model):
    """Whether a historian's new runs adapt the learnt judge to their decisions, and since when.

    A reset only moves `counted_from`: the decisions before it stay, they are no longer learnt
    from.
    """

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                                related_name="judge_learning")
    enabled = models.BooleanField(default=True)
    counted_from = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)


class LLMCall(models.Model):
    """A paid model call with its reply, so an interrupted run resumes without paying twice.

    The only stored copy of a reply: the run's llm_call events carry usage, not the reply.
    """

    investigation = models.ForeignKey(Investigation, on_delete=models.CASCADE,
                                      related_name="llm_call_records")
    ordinal = models.PositiveIntegerField()
    role = models.CharField(max_length=20)
    prompt_hash = models.CharField(max_length=64)
    # The exact prompt texts, each distinct text stored once (see PromptText).
    system_prompt = models.ForeignKey("PromptText", null=True, blank=True,
                                      on_delete=models.PROTECT, related_name="+")
    user_prompt = models.ForeignKey("PromptText", null=True, blank=True,
                                    on_delete=models.PROTECT, related_name="+")
    model = models.CharField(max_length=200, blank=True)
    response = models.TextField()
    succeeded = models.BooleanField(default=True,
                                    help_text="false: the reply was not usable API JSON")
    input_tokens = models.PositiveIntegerField(default=0)
    output_tokens = models.PositiveIntegerField(default=0)
    cached_tokens = models.PositiveIntegerField(default=0)
    seconds = models.FloatField(default=0.0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["investigation_id", "ordinal"]
        constraints = [
            models.UniqueConstraint(fields=["investigation", "ordinal"], name="llmcall_ordinal")
        ]

    @property
    def usage(self) -> TokenUsage:
        """Return the call's token usage, from its three stored counts."""
        return TokenUsage(self.input_tokens, self.output_tokens, self.cached_tokens)


class DocumentNote(models.Model):
    """A historian's note on a source within an investigation."""

    investigation = models.ForeignKey(Investigation, on_delete=models.CASCADE,
                                      related_name="notes")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL)
    document_key = models.CharField(max_length=400)
    text = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["investigation_id", "created_at"]


class EvidencePick(models.Model):
    """The passage a historian picked as a source's quote; the agent's evidence stays as it was.

    A new row each time (the newest is in force), like overrides, notes and orders.
    """

    investigation = models.ForeignKey(Investigation, on_delete=models.CASCADE,
                                      related_name="evidence_picks")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL)
    document_key = models.CharField(max_length=400)
    start = models.PositiveIntegerField()
    end = models.PositiveIntegerField()
    text = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["investigation_id", "created_at", "id"]


class PromptText(models.Model):
    """One distinct prompt text sent to a model, stored once and shared by every call using it."""

    sha256 = models.CharField(max_length=64, unique=True)
    text = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"prompt {self.sha256[:12]}"


class SourceOrder(models.Model):
    """A historian's order of the accepted sources; the newest row is the order in force."""

    investigation = models.ForeignKey(Investigation, on_delete=models.CASCADE,
                                      related_name="source_orders")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL)
    document_keys = models.JSONField(default=list)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["investigation_id", "-created_at", "-id"]


class AnswerDraft(models.Model):
    """A cited answer drafted from the accepted sources in force; every draft is kept, dated.

    `sources` are the decisions it was drafted from: the accepted sources in force then, in the
    order that numbers them (`[{"number", "document_key", "title"}]`); a draft whose list differs
    from today's was drafted before the historian's decisions changed. `sections` are the
    drafter's sections as JSON (`agent.engine.answer.AnswerSection.to_json`), each sentence with
    its citations (number, document key, character range).
    """

    class Drafter(models.TextChoices):
        EXTRACTIVE = AnswerDrafter.EXTRACTIVE.value, "extractive (no model)"
        LLM = AnswerDrafter.LLM.value, "LLM"

    investigation = models.ForeignKey(Investigation, on_delete=models.CASCADE,
                                      related_name="answer_drafts")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)
    drafter = models.CharField(max_length=20, choices=Drafter.choices)
    sources = models.JSONField(default=list)
    sections = models.JSONField(default=list)
    dropped = models.PositiveIntegerField(
        default=0, help_text="sentences left out: they cited no accepted source")
    # The LLM drafter's call: its model, usage and cost, and its last reply as received.
    model = models.CharField(max_length=200, blank=True)
    input_tokens = models.PositiveIntegerField(default=0)
    output_tokens = models.PositiveIntegerField(default=0)
    cost = models.FloatField(default=0.0)
    reply = models.TextField(blank=True)

    class Meta:
        ordering = ["investigation_id", "-created_at", "-id"]

    @property
    def label(self) -> str:
        return DRAFTER_LABELS[AnswerDrafter(self.drafter)]

    @property
    def usage(self) -> TokenUsage:
        """Return the drafter's token usage (cached tokens are not stored for a draft)."""
        return TokenUsage(self.input_tokens, self.output_tokens)

    @property
    def answer_sections(self) -> tuple[AnswerSection, ...]:
        """Return the stored sections, typed."""
        return sections_from_json(self.sections)

    @property
    def sentence_count(self) -> int:
        return sum(len(section.sentences) for section in self.answer_sections)

    @property
    def dropped_line(self) -> str:
        return dropped_line(self.dropped)

    @property
    def source_keys(self) -> list[str]:
        """The accepted sources it was drafted from, in the order that numbered them."""
        return [source["document_key"] for source in self.sources]
