"""Reads that set two runs side by side: two investigations, or two batches of the same questions.

Two investigations are compared by their sources in force (the agent's verdicts after the
historian's overrides, `source_review.reviewed_sources`), document by document (the document
key); two batches by each question's R@10 and multi-gold MRR, as the batch page scores them.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field

from agent.investigations.stats import QuestionScore, question_score
from agent.models import Batch, Investigation
from agent.policies import ADJUSTABLE_SETTINGS
from agent.review.export_safety import csv_cell
from agent.review.exports import CSV_BOM
from agent.sources import ReviewedSource, SourceState, reviewed_sources

NOT_FOUND = "not found"


@dataclass(frozen=True)
class Side:
    """Where one run left a document: its state in force, who decided, and why."""

    state: str = ""  # a SourceState; "" when the run gave the document no verdict
    rank: int | None = None  # its number among the run's accepted sources
    decided_by: str = ""  # "the agent", or the historian's name and time
    rationale: str = ""  # the decisive rationale (the historian's reason or note, else the agent's)

    @property
    def shown_state(self) -> str:
        return self.state or NOT_FOUND

    @property
    def accepted(self) -> bool:
        return self.state == SourceState.ACCEPTED


@dataclass(frozen=True)
class ComparedSource:
    """One document as the two runs left it."""

    document_key: str
    title: str
    a: Side
    b: Side
    gold: bool

    @property
    def group(self) -> str:
        """Say which of the three groups of accepted sources it belongs to, if any."""
        if self.a.accepted and self.b.accepted:
            return "accepted in both"
        if self.a.accepted:
            return "only in A"
        if self.b.accepted:
            return "only in B"
        return ""

    @property
    def verdict_changed(self) -> bool:
        """Both runs decided on it, and left it in different states."""
        return bool(self.a.state and self.b.state and self.a.state != self.b.state)


@dataclass(frozen=True)
class Difference:
    """One thing the second run was run with differently."""

    what: str
    a: str
    b: str


@dataclass
class InvestigationComparison:
    a: Investigation
    b: Investigation
    sources: list[ComparedSource]
    differences: list[Difference]
    score_a: QuestionScore | None = None  # None: no gold documents, or the run has not finished
    score_b: QuestionScore | None = None

    @property
    def both(self) -> list[ComparedSource]:
        return [s for s in self.sources if s.group == "accepted in both"]

    @property
    def only_a(self) -> list[ComparedSource]:
        return sorted((s for s in self.sources if s.group == "only in A"),
                      key=lambda s: s.a.rank or 0)

    @property
    def only_b(self) -> list[ComparedSource]:
        return sorted((s for s in self.sources if s.group == "only in B"),
                      key=lambda s: s.b.rank or 0)

    @property
    def changed(self) -> list[ComparedSource]:
        return [s for s in self.sources if s.verdict_changed]

    @property
    def has_gold(self) -> bool:
        return bool(self.a.gold_keys or self.b.gold_keys)


def investigations_compared(a: Investigation, b: Investigation) -> InvestigationComparison:
    """Set two investigations' sources in force side by side, in A's order then B's."""
    rows_a = {row.document_key: row for row in reviewed_sources(a)}
    rows_b = {row.document_key: row for row in reviewed_sources(b)}
    gold = set(a.gold_keys) | set(b.gold_keys)
    sources = []
    for key in dict.fromkeys([*rows_a, *rows_b]):
        row_a, row_b = rows_a.get(key), rows_b.get(key)
        row = row_a or row_b
        document = row.document if row is not None else None
        sources.append(ComparedSource(
            document_key=key, title=document.title if document is not None else key,
            a=_side(row_a), b=_side(row_b), gold=key in gold))
    return InvestigationComparison(
        a=a, b=b, sources=sources, differences=run_differences(a, b),
        score_a=_score(a, rows_a), score_b=_score(b, rows_b))


def _side(row: ReviewedSource | None) -> Side:
    if row is None:
        return Side()
    return Side(state=row.state,
                rank=row.rank if row.state == SourceState.ACCEPTED else None,
                decided_by=row.decision.label, rationale=row.decision.rationale)


def _score(investigation: Investigation, rows: dict[str, ReviewedSource]) -> QuestionScore | None:
    """Score the accepted sources in force, in their order, against the question's gold."""
    if not investigation.gold_keys or investigation.status != Investigation.Status.FINISHED:
        return None
    ranked = [key for key, row in rows.items() if row.state == SourceState.ACCEPTED]
    return question_score(ranked, investigation.gold_keys)


def run_differences(a: Investigation, b: Investigation) -> list[Difference]:
    """List what B was run with unlike A: question, policy, models, settings, restriction."""
    found = []

    def differ(what: str, first: str, second: str) -> None:
        if first != second:
            found.append(Difference(what, first, second))

    differ("question", a.question, b.question)
    differ("policy", a.policy_label, b.policy_label)
    for role in sorted(set(a.models_used) | set(b.models_used)):
        differ(f"{role} model", a.models_used.get(role, "—"), b.models_used.get(role, "—"))
    differ("sub-corpus", a.sub_corpus, b.sub_corpus)  # a slug; "" for every sub-corpus
    differ("from", _day(a.date_from), _day(b.date_from))
    differ("to", _day(a.date_to), _day(b.date_to))
    for setting in ADJUSTABLE_SETTINGS:
        differ(setting.label, str(a.engine_settings.get(setting.name, "—")),
               str(b.engine_settings.get(setting.name, "—")))
    return found


def _day(value) -> str:
    return value.isoformat() if value else "—"


INVESTIGATION_CSV_COLUMNS = [
    "group", "verdict_changed", "document_key", "title", "gold",
    "a_state", "a_rank", "a_decided_by", "a_rationale",
    "b_state", "b_rank", "b_decided_by", "b_rationale",
]


def investigation_comparison_csv(comparison: InvestigationComparison) -> str:
    """Write one row per document either run decided on, A's accepted first."""
    rows = []
    for source in [*comparison.both, *comparison.only_a, *comparison.only_b,
                   *(s for s in comparison.sources if not s.group)]:
        row: dict[str, object] = {
            "group": source.group or "accepted in neither",
            "verdict_changed": "yes" if source.verdict_changed else "no",
            "document_key": source.document_key, "title": source.title,
            "gold": ("yes" if source.gold else "no") if comparison.has_gold else "",
        }
        for name, side in (("a", source.a), ("b", source.b)):
            row.update({f"{name}_state": side.shown_state, f"{name}_rank": side.rank or "",
                        f"{name}_decided_by": side.decided_by,
                        f"{name}_rationale": side.rationale})
        rows.append(row)
    return _csv(INVESTIGATION_CSV_COLUMNS, rows)


@dataclass(frozen=True)
class QuestionMove:
    """One question of two batches: each run's score and how far it moved from A to B."""

    qid: str
    question: str
    a: Investigation
    b: Investigation
    score_a: QuestionScore | None
    score_b: QuestionScore | None

    @property
    def scored(self) -> bool:
        return self.score_a is not None and self.score_b is not None

    @property
    def recall_change(self) -> float | None:
        if self.score_a is None or self.score_b is None:
            return None
        return self.score_b.recall_at_10 - self.score_a.recall_at_10

    @property
    def mrr_change(self) -> float | None:
        if self.score_a is None or self.score_b is None:
            return None
        return self.score_b.multi_gold_mrr - self.score_a.multi_gold_mrr


@dataclass(frozen=True)
class Totals:
    """Means over the questions scored in both batches."""

    questions: int
    recall_a: float
    recall_b: float
    mrr_a: float
    mrr_b: float

    @property
    def recall_change(self) -> float:
        return self.recall_b - self.recall_a

    @property
    def mrr_change(self) -> float:
        return self.mrr_b - self.mrr_a


@dataclass
class BatchComparison:
    a: Batch
    b: Batch
    moves: list[QuestionMove]  # the questions both batches hold, largest move first
    only_a: list[Investigation] = field(default_factory=list)  # questions B does not hold
    only_b: list[Investigation] = field(default_factory=list)
    totals: Totals | None = None  # None when no question is scored on both sides


def batches_compared(a: Batch, b: Batch) -> BatchComparison:
    """Match two batches' questions (by question id, else text) and score each side.

    A side is scored when its run finished and its question has gold documents, on the agent's
    ranking (as the batch page scores it). The questions are sorted by the largest change of
    R@10, then of MRR; unscored ones come last.
    """
    runs_a = list(a.investigations.order_by("id"))
    runs_b = list(b.investigations.order_by("id"))
    by_question: dict[tuple[str, str], Investigation] = {}
    for run in runs_b:
        by_question.setdefault(_question_key(run), run)
    moves, only_a = [], []
    matched: set[int] = set()
    for run in runs_a:
        other = by_question.get(_question_key(run))
        if other is None or other.pk in matched:
            only_a.append(run)
            continue
        matched.add(other.pk)
        moves.append(QuestionMove(qid=run.qid, question=run.question, a=run, b=other,
                                  score_a=_batch_score(run), score_b=_batch_score(other)))
    moves.sort(key=lambda move: (not move.scored, -abs(move.recall_change or 0.0),
                                 -abs(move.mrr_change or 0.0), move.a.pk))
    scored = [move for move in moves if move.scored]
    totals = None
    if scored:
        count = len(scored)
        totals = Totals(
            questions=count,
            recall_a=sum(m.score_a.recall_at_10 for m in scored if m.score_a) / count,
            recall_b=sum(m.score_b.recall_at_10 for m in scored if m.score_b) / count,
            mrr_a=sum(m.score_a.multi_gold_mrr for m in scored if m.score_a) / count,
            mrr_b=sum(m.score_b.multi_gold_mrr for m in scored if m.score_b) / count)
    return BatchComparison(a=a, b=b, moves=moves, only_a=only_a,
                           only_b=[run for run in runs_b if run.pk not in matched],
                           totals=totals)


def _question_key(run: Investigation) -> tuple[str, str]:
    return ("qid", run.qid) if run.qid else ("question", " ".join(run.question.split()))


def _batch_score(run: Investigation) -> QuestionScore | None:
    if not run.gold_keys or run.status != Investigation.Status.FINISHED:
        return None
    return question_score(run.ranked_keys, run.gold_keys)


BATCH_CSV_COLUMNS = [
    "qid", "question", "a_investigation", "b_investigation", "gold",
    "a_recall_at_10", "b_recall_at_10", "recall_at_10_change",
    "a_mrr", "b_mrr", "mrr_change",
]


def batch_comparison_csv(comparison: BatchComparison) -> str:
    """Write one row per question held by both batches, largest move first, then the means."""
    rows: list[dict[str, object]] = []
    for move in comparison.moves:
        a, b = move.score_a, move.score_b
        rows.append({
            "qid": move.qid, "question": move.question,
            "a_investigation": move.a.pk, "b_investigation": move.b.pk,
            "gold": len(set(move.a.gold_keys)) or "",
            "a_recall_at_10": _figure(a.recall_at_10 if a else None),
            "b_recall_at_10": _figure(b.recall_at_10 if b else None),
            "recall_at_10_change": _figure(move.recall_change),
            "a_mrr": _figure(a.multi_gold_mrr if a else None),
            "b_mrr": _figure(b.multi_gold_mrr if b else None),
            "mrr_change": _figure(move.mrr_change),
        })
    if (totals := comparison.totals) is not None:
        rows.append({
            "qid": "", "question": f"mean over the {totals.questions} questions scored in both",
            "a_recall_at_10": _figure(totals.recall_a), "b_recall_at_10": _figure(totals.recall_b),
            "recall_at_10_change": _figure(totals.recall_change),
            "a_mrr": _figure(totals.mrr_a), "b_mrr": _figure(totals.mrr_b),
            "mrr_change": _figure(totals.mrr_change),
        })
    return _csv(BATCH_CSV_COLUMNS, rows)


def _figure(value: float | None) -> float | str:
    """A number stays a number (a spreadsheet reads "-0.25" as one, not as a formula)."""
    return "" if value is None else round(value, 4)


def _csv(columns: list[str], rows: list[dict[str, object]]) -> str:
    buffer = io.StringIO()
    buffer.write(CSV_BOM)
    writer = csv.DictWriter(buffer, fieldnames=columns)
    writer.writeheader()
    for row in rows:
        writer.writerow({column: csv_cell(row.get(column, "")) for column in columns})
    return buffer.getvalue()
