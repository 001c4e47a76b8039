"""Evaluation systems `offline`, `trace` and `oracle*`: the whole engine run per question."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace

from django.conf import settings

from agent.engine.claims import quoted_words, unsupported_claims
from agent.engine.config import EngineConfig
from agent.engine.events import Event, SearchRan, VerdictGiven, WarmStartRan
from agent.engine.investigation import run_investigation
from agent.engine.llm_policy import LLMPolicy
from agent.engine.offline import OfflinePolicy
from agent.engine.oracle import OracleJudge, OraclePolicy
from agent.engine.prompt_preview import PromptPreviewPolicy
from agent.engine.prompting import Prompt
from agent.engine.sinks import ListSink
from agent.investigations.chat import configured_chat_model
from agent.investigations.judges import RULES, judge_in_use, model_screen, offline_policy
from agent.investigations.retriever import ArchiveRetriever
from agent.policies import configured_policy
from archive.models import Chunk
from measurement.evaluation.records import AgentFigures, EvalQuestion, FalseClaim
from measurement.evaluation.systems import (
    EvalConfig,
    SystemRun,
    register_prompt_preview,
    register_system,
)
from measurement.judge_training import fold_models, question_digest


def agent_figures(events: list[Event], result) -> AgentFigures:
    """Derive the accepted / held / rejected / surfaced sets and usage from a run's events."""
    accepted = {c.document_key for chunks in result.accepted.values() for c in chunks}
    verdict_docs: dict[str, set[str]] = {}
    surfaced: set[str] = set()
    for event in events:
        if isinstance(event, (SearchRan, WarmStartRan)):
            surfaced.update(event.document_keys)
        elif isinstance(event, VerdictGiven):
            verdict_docs.setdefault(event.verdict, set()).add(event.document_key)
    # Held and never promoted includes chunks pushed out of a full held pool: they were found
    # and judged worth keeping, so their loss is the held stage's, not retrieval's.
    held = (set(result.held_document_keys) | verdict_docs.get("hold", set())) - accepted
    rejected = verdict_docs.get("reject", set()) - accepted - held
    counters = result.counters
    claims, false_claims = rationale_claims(events)
    return AgentFigures(
        accepted_keys=tuple(sorted(accepted)),
        held_keys=tuple(sorted(held)),
        rejected_keys=tuple(sorted(rejected)),
        surfaced_keys=tuple(sorted(surfaced)),
        llm_calls=counters.llm_calls,
        usage=counters.usage,
        engine_seconds=counters.engine_seconds,
        model_wait_seconds=counters.model_seconds,
        cost=configured_policy().cost(counters.usage),
        quoted_words=claims,
        false_claims=tuple(false_claims),
    )


def rationale_claims(events: list[Event]) -> tuple[int, list[FalseClaim]]:
    """Count the words the run's rationales quote, and list those their chunk does not print."""
    verdicts = [e for e in events if isinstance(e, VerdictGiven) and quoted_words(e.rationale)]
    texts = dict(Chunk.objects.filter(pk__in={v.chunk_id for v in verdicts})
                 .values_list("id", "text"))
    claims = 0
    false: list[FalseClaim] = []
    for verdict in verdicts:
        claims += len(quoted_words(verdict.rationale))
        for word in unsupported_claims(verdict.rationale, texts.get(verdict.chunk_id, "")):
            false.append(FalseClaim(chunk_id=verdict.chunk_id, word=word,
                                    rationale=verdict.rationale))
    return claims, false


def _engine_system(make_policy):
    def factory(config: EvalConfig):
        # The evaluation pool (sub-corpora and/or documents) bounds every search of the run.
        retriever = ArchiveRetriever(sub_corpora=config.sub_corpora,
                                     document_ids=config.document_ids)

        def system(question: EvalQuestion) -> SystemRun:
            sink = ListSink()  # evaluation keeps events in memory and persists nothing
            started = time.perf_counter()
            policy = make_policy(question)
            result = run_investigation(question.question, policy=policy,
                                       retriever=retriever, sink=sink, config=EngineConfig())
            figures = agent_figures(sink.events, result)
            judge = getattr(policy, "judge", None)
            if isinstance(judge, OracleJudge):
                figures = replace(figures, oracle_decisions=judge.decisions,
                                  oracle_errors=judge.errors)
            return SystemRun(list(result.ranked_document_keys), time.perf_counter() - started,
                             agent=figures)

        return system

    return factory


def _lazy_engine_system(make_factory):
    """An engine system whose policy maker is built when the system is first used."""
    def factory(config: EvalConfig):
        return _engine_system(make_factory())(config)

    return factory


def _offline_policy(question: EvalQuestion):
    return offline_policy()


def _rules_policy(question: EvalQuestion):
    return offline_policy(judge=RULES)


def _cross_validated_policy():
    """The learnt judge of the fold each question was held out of (see `train_judge`); a
    question the shipped model never learnt from is held out of it, and judged by it."""

    models = fold_models(settings.TRACE_DATA_DIR / "judge-training")
    shipped = judge_in_use().model
    learnt_from = set(shipped.card.get("trained_on", ())) if shipped else set()

    def make(question: EvalQuestion) -> OfflinePolicy:
        if question.qid in models:
            return OfflinePolicy(judge_model=models[question.qid])
        if shipped is None or question_digest(question.qid) in learnt_from:
            raise RuntimeError(f"question {question.qid!r}: no model held it out; run "
                               "`manage.py train_judge` on its questions file first")
        return OfflinePolicy(judge_model=shipped)

    return make


def _oracle_policy(error_rate: float):
    """Build, per question, an oracle judging by its gold keys, seeded by its id."""
    def make(question: EvalQuestion) -> OraclePolicy:
        judge = OracleJudge(question.gold_keys, error_rate=error_rate,
                            seed=question.qid or question.question)
        return OraclePolicy(judge)

    return make


# Judge error rates of the oracle curve; `oracle` is the perfect judge (the search ceiling).
ORACLE_ERROR_RATES = (0.0, 0.05, 0.10, 0.20, 0.30)


def oracle_system_name(error_rate: float) -> str:
    """Name the oracle system of one error rate: `oracle`, `oracle-err05`, `oracle-err10`..."""
    return "oracle" if error_rate == 0 else f"oracle-err{round(error_rate * 100):02d}"


def _llm_policy(question: EvalQuestion):
    if not settings.TRACE_LLM_BASE_URL:
        raise RuntimeError("the `trace` system needs TRACE_LLM_BASE_URL (an OpenAI-compatible "
                           "endpoint); use `offline` to run the engine without a model")

    return LLMPolicy(configured_chat_model(), screen=model_screen())


def preview_trace_prompts(question: EvalQuestion, config: EvalConfig,
                          write: Callable[[str], None]) -> None:
    """Write every prompt the `trace` system would send for a question; no model is called."""

    count = 0

    def show(prompt: Prompt) -> None:
        nonlocal count
        count += 1
        write(f"===== prompt {count}: {prompt.name} (role {prompt.role}, sha256 "
              f"{prompt.hash[:12]}) =====")
        write("----- system -----")
        write(prompt.system)
        write("----- user -----")
        write(prompt.user)

    retriever = ArchiveRetriever(sub_corpora=config.sub_corpora,
                                 document_ids=config.document_ids)
    write(f"question {question.qid}: {question.question}")
    run_investigation(question.question, policy=PromptPreviewPolicy(show),
                      retriever=retriever, sink=ListSink(), config=EngineConfig())
    write(f"===== {count} prompts; decisions taken by the offline rules, no model called =====")


def register() -> None:
    register_system("offline", _engine_system(_offline_policy))
    register_system("offline-rules", _engine_system(_rules_policy))
    register_system("offline-learnt-cv", _lazy_engine_system(_cross_validated_policy))
    register_system("trace", _engine_system(_llm_policy))
    for error_rate in ORACLE_ERROR_RATES:
        register_system(oracle_system_name(error_rate),
                        _engine_system(_oracle_policy(error_rate)))
    register_prompt_preview("trace", preview_trace_prompts)
