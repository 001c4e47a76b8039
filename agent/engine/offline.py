"""Offer a deterministic, rule-based stand-in for the model: no LLM is involved.

The offline policy drives the same engine as the LLM policy, with rules instead of a model:
- plan: one sub-question per sub-corpus the question names ("Le Gaulois", "la Chambre", "la
  presse"...), every sub-corpus when it names none; entities keep their surface form;
- step: review the pending batch; otherwise run the next unused search from a fixed queue
  (BM25 on entities and terms, dense on the sub-question, substring on names, temporal around
  known dates, BM25 on briefing hints), then finish;
- judge: accept the head of the fused warm start when it shares some of the question's content
  words (accent-folded, stemmed, OCR-tolerant) or names its person; accept a single-channel find
  only at the very top with most of q; hold the middle, reject the rest; at most
  `max_accepted` documents per sub-question; every verdict carries its figures as signals
  (matched words, batch rank, channel ranks), quotes the sentences that carry most of q's
  words and names, and says in q's language why the passage matters (never its figures);
- held re-evaluation: promote held chunks whose document already has an accepted chunk, or that
  match nearly all the words the accepted chunks matched, then those whose own meaning signals
  are decisive (held only for their rank), strongest first, while there is room (a full
  sub-question takes up to `extra_accepted` more, each stronger than its weakest source);
- briefing: built from the accepted chunks; replanning: adds a sub-question on an uncovered
  sub-corpus only when the previous one accepted nothing;
- ranking: order by the retrieval rank in the signals, raised by the q-term overlap and by a
  date within days of another sub-corpus's lead source (coverage of one event).
Decisions read the signals only: rewording a rationale changes no decision and no ranking.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from datetime import date, timedelta
from typing import Literal

from agent.engine.evidence import best_sentences, most_terms_in_a_sentence
from agent.engine.judge_features import JudgedRow, judge_features
from agent.engine.judge_model import JudgeModel, Thresholds
from agent.engine.offline_plan import KIND_WORDS, offline_plan
from agent.engine.policy import (
    BriefContext,
    HeldContext,
    ModelCallSummary,
    PlanContext,
    RankContext,
    RankItem,
    ReplanContext,
    StepContext,
)
from agent.engine.policy_spec import OFFLINE_LABEL
from agent.engine.schemas import (
    AgentStep,
    Briefing,
    Channel,
    ChunkDecision,
    HeldReevalOutput,
    PlannedSubQuestion,
    PlannerOutput,
    Promotion,
    RankOutput,
    ReplanOutput,
    ReviewArgs,
    SearchArgs,
)
from agent.engine.text import (
    STOPWORDS,
    TermMatcher,
    content_terms,
    extract_entities,
    inflection_base,
    is_full_date,
    matcher_for,
    name_keys,
    normalise_query,
    strip_mentions,
    sub_question_query,
    surnames,
    tokens,
)
from agent.engine.types import WARM_START, Memory, SubQuestionSpec, VerdictSignals
from agent.engine.wording import fitted, language_of, phrase, surface_forms
from common.search import Hit

# How a step's thought names a search for the historian (the live page shows thoughts as written).
SEARCH_WORDS = {"bm25": "by keywords", "dense": "by meaning", "temporal": "by dates",
                "substring": "for the exact words, OCR errors allowed"}
_SEARCH_OFFSET = 5  # a single-channel find ranks after the warm start's head
_UNRANKED = 10  # accepted without signals (e.g. promoted on evidence words)
_DAYS = 3


class OfflinePolicy:
    """Decide by deterministic rules; presented as the offline policy, never as a model."""

    name = OFFLINE_LABEL

    def __init__(self, *, accept_share: float = 0.5, hold_share: float = 0.2,
                 promote_share: float = 0.8, accept_rank: int = 5, max_accepted: int = 5,
                 extra_accepted: int = 2,
                 share_weight: float = 2.0, date_bonus: float = 1.0,
                 rationale_max: int = 120, passage_min: int = 2,
                 judge_model: JudgeModel | None = None,
                 thresholds: Thresholds | None = None,
                 judged: list[JudgedRow] | None = None) -> None:
        self.accept_share = accept_share
        self.hold_share = hold_share
        self.promote_share = promote_share
        self.accept_rank = accept_rank
        self.max_accepted = max_accepted
        self.extra_accepted = extra_accepted
        self.share_weight = share_weight
        self.date_bonus = date_bonus
        self.rationale_max = rationale_max
        self.passage_min = passage_min
        # The learnt judge decides when a model is given (its thresholds, or adapted ones);
        # the rules decide otherwise. `judged`, when given, collects every chunk's features.
        self.judge_model = judge_model
        self.thresholds = thresholds or (judge_model.thresholds if judge_model else None)
        self.judged = judged

    # -- planning -----------------------------------------------------------------------------

    def plan(self, ctx: PlanContext, calls: list[ModelCallSummary]) -> PlannerOutput:
        """Fan the question out per mentioned sub-corpus."""
        plan = offline_plan(ctx.question, ctx.sub_corpora, ctx.m_max, ctx.sub_corpus)
        return PlannerOutput(sub_questions=[_planned(sq) for sq in plan])

    def replan(self, ctx: ReplanContext, calls: list[ModelCallSummary]) -> ReplanOutput:
        """Add an uncovered sub-corpus only when the last sub-question found nothing."""
        if not ctx.accepted_counts or ctx.accepted_counts[-1] > 0:
            return ReplanOutput(remaining=None, rationale="plan kept")
        covered = {sq.target_sub_corpus for sq in ctx.done + ctx.remaining}
        free = [info.slug for info in ctx.sub_corpora if info.slug not in covered]
        if not free or len(ctx.done) + len(ctx.remaining) >= ctx.m_max:
            return ReplanOutput(remaining=None, rationale="nothing found; no room to widen")
        last = ctx.done[-1]
        added = SubQuestionSpec(last.text, free[0], last.entities, last.target_date)
        return ReplanOutput(remaining=[_planned(sq) for sq in [*ctx.remaining, added]],
                            rationale=f"nothing accepted; also searching {free[0]}")

    # -- agent steps --------------------------------------------------------------------------

    def step(self, ctx: StepContext, calls: list[ModelCallSummary]) -> AgentStep:
        """Review what is pending, else run the next unused search, else finish."""
        terms = self._terms(ctx.question, ctx)
        memory = Memory(
            prior_findings=ctx.memory.prior_findings,
            question_analysis="key terms: " + ", ".join(terms[:12]),
            evidence_gathered=f"{len(ctx.accepted)} accepted, {len(ctx.held)} held",
            gaps_remaining="",
            next_steps="",
        )
        if ctx.pending:
            docs = {a.document_key for a in ctx.accepted}
            verdicts = []
            for rank, hit in enumerate(ctx.pending, start=1):
                room = len(docs) < self.max_accepted or hit.document_key in docs
                verdict = self.judge(ctx, terms, hit, rank=rank, room=room)
                if verdict.verdict == "accept":
                    docs.add(hit.document_key)
                verdicts.append(verdict)
            return AgentStep(thought="read the passages the last search found", action="review",
                             args=ReviewArgs(verdicts=verdicts),
                             memory_update=memory)
        done = {(s.channel, normalise_query(s.query), s.date_from, s.date_to, s.sub_corpus)
                for s in ctx.searches}
        for args in self._queue(ctx, terms):
            key = (args.channel, normalise_query(args.query), args.date_from, args.date_to,
                   args.sub_corpus)
            if key not in done:
                return AgentStep(thought="the next search of its plan, "
                                 f"{SEARCH_WORDS.get(args.channel, args.channel)}",
                                 action="search",
                                 args=args, memory_update=memory)
        return AgentStep(thought="every planned search has run", action="finish", args={},
                         memory_update=memory)

    def _terms(self, question: str, ctx: StepContext | None = None) -> list[str]:
        sub_corpora = ctx.sub_corpora if ctx else []
        return content_terms(strip_mentions(question, sub_corpora))

    def _queue(self, ctx: StepContext, terms: list[str]) -> list[SearchArgs]:
        sq = ctx.sub_question
        target = sq.target_sub_corpus
        names = surnames(sq.entities)

        def search(channel: Channel, query: str, date_from: str | None = None,
                   date_to: str | None = None) -> SearchArgs:
            return SearchArgs(channel=channel, query=query, date_from=date_from,
                              date_to=date_to, sub_corpus=target)

        queue = [search("bm25", " ".join([*names, *terms])),
                 search("dense", sub_question_query(sq.text, ctx.sub_corpora))]
        if names:
            queue.append(search("bm25", " ".join(names)))
        for name in sorted(names, key=len, reverse=True)[:2]:
            queue.append(search("substring", name))
        days = [d for d in [sq.target_date or ""] if is_full_date(d)]
        days += [d for b in ctx.briefings for d in b.confirmed_dates if is_full_date(d)]
        for day in list(dict.fromkeys(days))[:2]:
            start = date.fromisoformat(day)
            queue.append(search("temporal", " ".join(terms[:6]),
                                (start - timedelta(days=1)).isoformat(),
                                (start + timedelta(days=7)).isoformat()))
        hints = [h for b in ctx.briefings for h in b.search_hints][:8]
        if hints:
            queue.append(search("bm25", " ".join([*names, *hints])))
        return queue

    def judge(self, ctx: StepContext, terms: list[str], hit: Hit, *, rank: int = 1,
              room: bool = True) -> ChunkDecision:
        """Judge one chunk by meaning signals: q's terms together in a passage, names, date.

        Sharing a word with the question is not enough: the terms must meet in one passage
        (up to three sentences), or a named person or place must stand beside them, or the
        chunk must be dated as the question asks.
        """
        # Words naming a kind of source ("Chambre", "presse") say nothing of a passage's topic.
        terms = [term for term in terms if term not in KIND_WORDS]
        signals = self.signals(ctx, terms, hit, rank)
        if self.judged is not None:
            self.judged.append(JudgedRow(hit.document_key,
                                         tuple(judge_features(ctx, hit, signals))))
        if self.judge_model is not None and self.thresholds is not None:
            signals = self._judged(ctx, hit, signals)
            probability = signals.probability or 0.0
            strong = probability >= self.thresholds.accept
            middle = probability >= self.thresholds.hold
        else:
            strong = self.decisive(signals) and (
                rank <= self.accept_rank if signals.from_warm_start else rank <= 2)
            middle = (rank <= 2 * self.accept_rank if signals.from_warm_start else True) and \
                signals.share >= self.hold_share and signals.passage_terms >= 2
        if strong and room:
            verdict: Literal["accept", "reject", "hold"] = "accept"
        elif strong or middle:
            verdict = "hold"
        else:
            verdict = "reject"
        start, end = best_sentences(hit.text, terms, name_keys(ctx.sub_question.entities))
        matcher = matcher_for(hit.text)
        # A name is claimed only when printed as spelt (an OCR misreading is not the name).
        named = [entity for entity in ctx.sub_question.entities
                 if any(_spelt(matcher, key) for key in name_keys([entity]))]
        on_day = bool(hit.date and is_full_date(ctx.sub_question.target_date)
                      and hit.date[:10] == ctx.sub_question.target_date)
        return ChunkDecision(chunk_id=hit.chunk_id, verdict=verdict,
                       rationale=self.rationale(ctx.question, verdict, signals, named, on_day),
                       quote=hit.text[start:end], signals=signals)

    def screened(self, ctx: StepContext) -> tuple[list[Hit], list[ChunkDecision]]:
        """Split the pending chunks: those a model should read, and those the learnt judge
        rejects with such confidence that they are screened out (a verdict saying so)."""
        if self.judge_model is None or self.thresholds is None:
            return list(ctx.pending), []
        terms = [t for t in self._terms(ctx.question, ctx) if t not in KIND_WORDS]
        language = language_of(ctx.question)
        kept, screened = [], []
        for rank, hit in enumerate(ctx.pending, start=1):
            signals = self._judged(ctx, hit, self.signals(ctx, terms, hit, rank))
            if (signals.probability or 0.0) < self.thresholds.screen:
                screened.append(ChunkDecision(
                    chunk_id=hit.chunk_id, verdict="reject", rationale=phrase(language, "screened"),
                    signals=signals))
            else:
                kept.append(hit)
        return kept, screened

    def _judged(self, ctx: StepContext, hit: Hit, signals: VerdictSignals) -> VerdictSignals:
        """The signals with the learnt judge's probability that the chunk's document is gold."""
        assert self.judge_model is not None
        probability = self.judge_model.probabilities([judge_features(ctx, hit, signals)])[0]
        return replace(signals, probability=probability)

    def signals(self, ctx: StepContext, terms: list[str], hit: Hit, rank: int) -> VerdictSignals:
        """Measure what a verdict rests on: matched words as printed, their spread, names, date."""
        matcher = matcher_for(hit.text)
        matched = matcher.matched(terms)
        names = name_keys(ctx.sub_question.entities)
        start, end = best_sentences(hit.text, terms, names)
        passage = TermMatcher(hit.text[start:end])
        return VerdictSignals(
            query_terms=len(terms), matched_terms=tuple(matched),
            found_by=ctx.searches[-1].channel if ctx.searches else WARM_START, batch_rank=rank,
            score=hit.score, channel_ranks=dict(sorted(hit.channel_ranks.items())),
            matched_forms=tuple(str(matcher.written(term)) for term in matched),
            sentence_terms=most_terms_in_a_sentence(hit.text, terms),
            passage_terms=len(passage.matched(terms)),
            names_found=sum(1 for key in names if matcher.matches(key)),
            date_agrees=date_agrees(hit.date, ctx.sub_question.target_date))

    def decisive(self, signals: VerdictSignals) -> bool:
        """Tell whether the signals show the chunk is about the question, not a word in passing."""
        together = signals.passage_terms >= self.passage_min
        if signals.names_found:
            return signals.passage_terms >= 1 or signals.date_agrees
        if signals.date_agrees:
            return signals.passage_terms >= 2
        return together and signals.sentence_terms >= 2

    def rationale(self, question: str, verdict: str, signals: VerdictSignals,
                  named: list[str], on_day: bool = False) -> str:
        """Say, in the question's language, why the passage matters; never its figures."""
        language = language_of(question)
        forms = surface_forms(question)
        in_names = {word for entity in named for word in tokens(entity)}
        # Quote the words as the passage prints them; the question's spelling only stands in
        # for signals measured before printed forms were kept.
        printed = dict(zip(signals.matched_terms, signals.matched_forms, strict=False))
        terms = [printed.get(term) or forms.get(term, term) for term in signals.matched_terms
                 if term not in in_names]
        tail = phrase(language, "on_day") if on_day and verdict != "reject" else ""
        if verdict == "accept":
            if named and terms:
                key = "accept_named"
            elif named:
                key = "accept_named_only"
            else:
                key = "accept" if terms else "accept_bare"
        elif verdict == "hold":
            key = "hold" if terms else "hold_bare"
        else:
            key = "reject" if terms else "reject_bare"
        return fitted(language, key, self.rationale_max, terms=terms, names=named, tail=tail)

    # -- closing a sub-question ---------------------------------------------------------------

    def reevaluate_held(self, ctx: HeldContext, calls: list[ModelCallSummary]) -> HeldReevalOutput:
        """Promote held chunks backed by an accepted sibling or by the accepted evidence words.

        A sibling keeps the figures of its own hold verdict; a chunk promoted on evidence words
        has no retrieval figures of its own and ranks as unranked.
        """
        language = language_of(ctx.question)
        accepted_docs = {a.document_key for a in ctx.accepted}
        evidence = list(dict.fromkeys(
            term for a in ctx.accepted if a.signals for term in a.signals.matched_terms))
        promotions = []
        for held in ctx.held:
            doc = held.hit.document_key
            if doc in accepted_docs:
                promotions.append(Promotion(chunk_id=held.hit.chunk_id,
                                            rationale=phrase(language, "sibling"),
                                            signals=held.signals))
                continue
            if self.judge_model is None and len(evidence) >= 2 and \
                    len(accepted_docs) < self.max_accepted:
                matcher = matcher_for(held.hit.text)
                hits = matcher.matched(evidence)
                if len(hits) >= 2 and len(hits) / len(evidence) >= self.promote_share:
                    accepted_docs.add(doc)
                    promotions.append(Promotion(
                        chunk_id=held.hit.chunk_id,
                        rationale=fitted(language, "echoes", self.rationale_max,
                                         terms=[str(matcher.written(t)) for t in hits[:6]])))
        promotions += self._decisive_promotions(ctx, accepted_docs,
                                                {p.chunk_id for p in promotions})
        return HeldReevalOutput(promotions=promotions,
                                rationale=f"{len(promotions)} promoted by sibling, evidence "
                                "or their own meaning signals")

    def _decisive_promotions(self, ctx: HeldContext, accepted_docs: set[str],
                             taken: set[int]) -> list[Promotion]:
        """Promote held chunks whose own signals are decisive, strongest first.

        Such a chunk was held for where it stood (below the warm start's head, past the top of
        a single channel's batch, or after the sub-question's sources were full), not for what
        it says: once the searches are done, its meaning signals are the evidence, ranked by its
        own figures. It takes a free place; a full sub-question takes up to `extra_accepted`
        more, each stronger than the weakest source it accepted.
        """
        weakest = max((self._strength(a.signals) for a in ctx.accepted if a.signals),
                      default=None)
        candidates = sorted(
            (held for held in ctx.held if held.hit.chunk_id not in taken and not held.auto_held
             and held.signals is not None and held.hit.document_key not in accepted_docs
             and self._decisive(held.signals)),
            key=lambda held: self._strength(held.signals) if held.signals else ())
        promotions = []
        for held in candidates:
            doc, signals = held.hit.document_key, held.signals
            if doc in accepted_docs or signals is None:
                continue
            if len(accepted_docs) >= self.max_accepted and not (
                    weakest is not None and self._strength(signals) < weakest
                    and len(accepted_docs) < self.max_accepted + self.extra_accepted):
                break
            accepted_docs.add(doc)
            matcher = matcher_for(held.hit.text)
            named = [entity for entity in ctx.sub_question.entities
                     if any(_spelt(matcher, key) for key in name_keys([entity]))]
            promotions.append(Promotion(
                chunk_id=held.hit.chunk_id, signals=signals,
                rationale=self.rationale(ctx.question, "accept", signals, named)))
        return promotions

    def _decisive(self, signals: VerdictSignals) -> bool:
        """Tell whether a held chunk's own signals earn it a place (the model's, if any)."""
        if self.thresholds is not None and signals.probability is not None:
            return signals.probability >= self.thresholds.accept
        return self.decisive(signals)

    @staticmethod
    def _strength(signals: VerdictSignals) -> tuple[float, ...]:
        """Order verdicts strongest first when sorted: by probability, else by the signals."""
        if signals.probability is not None:
            return (-signals.probability,)
        return tuple(float(x) for x in signals.strength())

    def brief(self, ctx: BriefContext, calls: list[ModelCallSummary]) -> Briefing:
        """Summarise the accepted chunks: matched words, dates, recurring names."""
        terms = content_terms(ctx.question)
        matched: Counter[str] = Counter()
        names: Counter[str] = Counter()
        extra: Counter[str] = Counter()
        for a in ctx.accepted:
            text = ctx.accepted_text.get(a.chunk_id, "")
            matcher = matcher_for(text)
            matched.update(matcher.matched(terms))
            names.update(e for e in extract_entities(text) if e.startswith(("M. ", "MM. ")))
            extra.update(t for t in content_terms(text) if len(t) >= 6 and t not in terms
                         and t not in STOPWORDS)
        found = [t for t, _ in sorted(matched.items(), key=lambda kv: (-kv[1], kv[0]))]
        accepted = len(ctx.accepted)
        return Briefing(
            summary=f"{accepted} source{'s' * (accepted != 1)} accepted for sub-question "
            f"{ctx.index + 1}; question words found: {', '.join(found[:8]) or 'none'}",
            confirmed_facts=[f"{a.title or a.document_key}: {a.rationale}"
                             for a in ctx.accepted],
            # Strongest source first: later sub-questions search around its date.
            confirmed_dates=list(dict.fromkeys(a.date for a in ctx.accepted if a.date)),
            confirmed_entities=[n for n, c in sorted(names.items(), key=lambda kv: (-kv[1], kv[0]))
                                if c >= 2][:10],
            gaps=[t for t in terms if t not in matched],
            search_hints=[t for t, c in sorted(extra.items(), key=lambda kv: (-kv[1], kv[0]))
                          if c >= 2][:5],
        )

    def rank_group(self, ctx: RankContext, calls: list[ModelCallSummary]) -> RankOutput:
        """Order by retrieval rank and q-term overlap, lifting sources dated alongside a lead."""
        if ctx.items and all(any(s.probability is not None for s in item.signals)
                             for item in ctx.items):
            # The learnt judge's probability orders sources confirmed as often as each other.
            def probability(item: RankItem) -> float:
                return max(s.probability or 0.0 for s in item.signals)
            by_probability = sorted(ctx.items, key=lambda item: (-probability(item),
                                                                 min(item.positions or [0])))
            return RankOutput(order=[item.document_key for item in by_probability])
        evidence = [_evidence(item.signals) for item in ctx.items]
        leads = [item for item, (rank, _) in zip(ctx.items, evidence, strict=True) if rank == 1]

        def score(position: int) -> tuple[float, int, int]:
            item = ctx.items[position]
            rank, share = evidence[position]
            corroborated = any(_dated_together(item, lead) for lead in leads)
            value = -rank + self.share_weight * share + (self.date_bonus if corroborated else 0)
            return (-value, min(item.positions or [0]), position)

        order = sorted(range(len(ctx.items)), key=score)
        return RankOutput(order=[ctx.items[i].document_key for i in order])


def _evidence(signals: list[VerdictSignals]) -> tuple[int, float]:
    """Return a document's best retrieval rank and q-term overlap over its accepted chunks."""
    rank, share = _UNRANKED, 0.0
    for found in signals:
        share = max(share, found.share)
        offset = 0 if found.from_warm_start else _SEARCH_OFFSET
        rank = min(rank, offset + found.batch_rank)
    return rank, share


def _spelt(matcher: TermMatcher, key: str) -> bool:
    """Tell whether the text prints the word as spelt, inflected at most."""
    written = matcher.written(key)
    return written is not None and inflection_base("".join(tokens(written))) == \
        inflection_base(key)


def date_agrees(day: str | None, asked: str | None) -> bool:
    """Tell whether a chunk's date fits the date asked: the day or the week after, or the month.

    Papers print a sitting's news in the next days, so a week after the day asked agrees.
    """
    if not day or not asked:
        return False
    if is_full_date(asked):
        try:
            gap = (date.fromisoformat(day[:10]) - date.fromisoformat(asked)).days
        except ValueError:
            return False
        return 0 <= gap <= 7
    return len(asked) == 7 and day[:7] == asked


def _dated_together(item: RankItem, lead: RankItem) -> bool:
    """Tell whether two sources of different sub-corpora are dated within a few days.

    Papers report a sitting in the next days and cover the same event within days of each
    other, so a date close to a lead source from elsewhere is corroborating evidence.
    """
    if item.sub_corpus == lead.sub_corpus or not item.date or not lead.date:
        return False
    try:
        gap = (date.fromisoformat(item.date[:10]) - date.fromisoformat(lead.date[:10])).days
    except ValueError:
        return False
    return abs(gap) <= _DAYS


def _planned(sq: SubQuestionSpec) -> PlannedSubQuestion:
    return PlannedSubQuestion(text=sq.text, target_sub_corpus=sq.target_sub_corpus,
                              entities=list(sq.entities), target_date=sq.target_date)
