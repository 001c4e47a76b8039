"""Evaluation systems `offline` and `trace`: the whole engine run per question, in process."""

from __future__ import annotations

import time

from django.conf import settings

from agent.engine.config import EngineConfig
from agent.engine.events import Event, SearchRan, VerdictGiven, WarmStartRan
from agent.engine.investigation import run_investigation
from agent.engine.sinks import ListSink
from agent.retriever import ArchiveRetriever
from retrieval.evaluation.systems import EvalConfig, SystemRun, register_system


def agent_extras(events: list[Event], result) -> dict:
    """Derive the accepted / held / rejected / surfaced sets and usage from a run's events."""
    accepted = {c.document_key for chunks in result.accepted.values() for c in chunks}
    held = set(result.held_document_keys) - accepted
    verdict_docs: dict[str, set[str]] = {}
    surfaced: set[str] = set()
    for event in events:
        if isinstance(event, (SearchRan, WarmStartRan)):
            surfaced.update(event.document_keys)
        elif isinstance(event, VerdictGiven):
            verdict_docs.setdefault(event.verdict, set()).add(event.document_key)
    rejected = verdict_docs.get("reject", set()) - accepted - held
    counters = result.counters
    return {
        "accepted_ids": sorted(accepted),
        "held_ids": sorted(held),
        "rejected_ids": sorted(rejected),
        "surfaced_ids": sorted(surfaced),
        "llm_calls": counters.llm_calls,
        "input_tokens": counters.input_tokens,
        "output_tokens": counters.output_tokens,
        "engine_seconds": counters.engine_seconds,
        "model_wait_seconds": counters.model_seconds,
    }


def _engine_system(make_policy):
    def factory(config: EvalConfig):
        # The evaluation pool (sub-corpora and/or documents) bounds every search of the run.
        retriever = ArchiveRetriever(sub_corpora=config.sub_corpora,
                                     document_ids=config.document_ids)

        def system(question: dict) -> SystemRun:
            sink = ListSink()  # evaluation keeps events in memory and persists nothing
            started = time.perf_counter()
            result = run_investigation(question["question"], policy=make_policy(),
                                       retriever=retriever, sink=sink, config=EngineConfig())
            return SystemRun(list(result.ranked_document_keys), time.perf_counter() - started,
                             agent_extras(sink.events, result))

        return system

    return factory


def _offline_policy():
    from agent.engine.offline import OfflinePolicy

    return OfflinePolicy()


def _llm_policy():
    from agent.chat import configured_chat_model
    from agent.engine.llm_policy import LLMPolicy

    if not settings.TRACE_LLM_BASE_URL:
        raise RuntimeError("the `trace` system needs TRACE_LLM_BASE_URL (an OpenAI-compatible "
                           "endpoint); use `offline` to run the engine without a model")
    return LLMPolicy(configured_chat_model())


def register() -> None:
    register_system("offline", _engine_system(_offline_policy))
    register_system("trace", _engine_system(_llm_policy))
