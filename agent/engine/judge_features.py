"""What the learnt judge reads of one chunk: the figures its verdict can rest on, as numbers.

Nothing here identifies a document, a question or a dataset: every feature is a measure of how
the chunk meets its sub-question (terms, names, dates), how the searches found it, and what the
run has gathered so far. A missing measure is NaN (the model routes it on its own).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import date

from agent.engine.evidence import most_terms_in_a_sentence
from agent.engine.policy import StepContext
from agent.engine.sources import is_debate
from agent.engine.text import (
    TermMatcher,
    content_terms,
    matcher_for,
    name_keys,
    sub_question_query,
)
from agent.engine.types import VerdictSignals
from common.search import Hit

CHANNELS = ("bm25", "dense", "substring", "temporal")
FEATURES = (
    "query_terms", "matched_share", "matched_terms", "sentence_terms", "passage_terms",
    "names_asked", "names_found", "date_agrees", "date_distance_days", "batch_rank",
    "fused_score", *(f"rank_{channel}" for channel in CHANNELS), "channels",
    "found_by_warm_start", *(f"found_by_{channel}" for channel in CHANNELS),
    "target_sub_corpus_match", "debate_chunk", "sub_question_share",
    "sub_question_sentence_terms", "sub_question_index", "accepted_so_far",
    "document_accepted", "document_held", "same_document_pending", "chunk_words",
)  # fmt: skip
NAN = math.nan


def date_distance_days(day: str | None, asked: str | None) -> float:
    """Days between a chunk's date and the date asked (0 inside an asked month or year)."""
    if not day or not asked:
        return NAN
    try:
        chunk_day = date.fromisoformat(day[:10])
        if len(asked) == 10:
            return float(abs((chunk_day - date.fromisoformat(asked)).days))
        if len(asked) == 7:
            first = date.fromisoformat(f"{asked}-01")
            if chunk_day.strftime("%Y-%m") == asked:
                return 0.0
            return float(min(abs((chunk_day - first).days), abs((chunk_day - first).days - 30)))
        return 0.0 if chunk_day.year == int(asked[:4]) else 365.0 * abs(chunk_day.year
                                                                        - int(asked[:4]))
    except ValueError:
        return NAN


def judge_features(ctx: StepContext, hit: Hit, signals: VerdictSignals) -> list[float]:
    """Return the chunk's features, in the order of FEATURES."""
    sq = ctx.sub_question
    own_terms = content_terms(sub_question_query(sq.text, ctx.sub_corpora))
    matcher: TermMatcher = matcher_for(hit.text)
    ranks = signals.channel_ranks
    target = sq.target_sub_corpus
    kinds = {info.slug: info for info in ctx.sub_corpora}
    accepted_docs = {a.document_key for a in ctx.accepted}
    held_docs = {h.hit.document_key for h in ctx.held}
    values: list[float] = [
        signals.query_terms, signals.share, len(signals.matched_terms), signals.sentence_terms,
        signals.passage_terms, len(name_keys(sq.entities)), signals.names_found,
        float(signals.date_agrees), date_distance_days(hit.date, sq.target_date),
        signals.batch_rank, signals.score,
        *(float(ranks[channel]) if channel in ranks else NAN for channel in CHANNELS),
        len(ranks), float(signals.from_warm_start),
        *(float(signals.found_by == channel) for channel in CHANNELS),
        NAN if not target else float(hit.sub_corpus == target),
        float(hit.sub_corpus in kinds and is_debate(kinds[hit.sub_corpus])),
        len(matcher.matched(own_terms)) / len(own_terms) if own_terms else NAN,
        most_terms_in_a_sentence(hit.text, own_terms) if own_terms else NAN,
        ctx.index, len(accepted_docs), float(hit.document_key in accepted_docs),
        float(hit.document_key in held_docs),
        sum(1 for other in ctx.pending if other.document_key == hit.document_key),
        len(hit.text.split()),
    ]
    return [float(value) for value in values]


@dataclass(frozen=True)
class JudgedRow:
    """One chunk a run judged, with its features: a training row once its label is known."""

    document_key: str
    features: tuple[float, ...]
