"""Registry of evaluable systems: `(EvalQuestion) -> SystemRun`, built by a factory."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from archive.models import SubCorpus
from common.french_dates import extract_date_window
from common.search import DateWindow, SearchRequest
from measurement.evaluation.fusions import per_subcorpus_hybrid
from measurement.evaluation.records import EvalQuestion, SystemRun
from measurement.evaluation.reference import Bm25sReference
from retrieval import channels
from retrieval.analysis import AnalyzerOptions
from retrieval.bm25.indexer import prepare_index
from retrieval.channels.base import Channel
from retrieval.channels.bm25 import Bm25Channel
from retrieval.fusion import rrf
from retrieval.warm_start import DEFAULT_WEIGHTS, warm_start_rankings


@dataclass(frozen=True)
class EvalConfig:
    """Candidate pool and depth shared by every system of one evaluation."""

    sub_corpora: tuple[str, ...] | None = None
    document_ids: tuple[int, ...] | None = None
    depth: int = 100

    def request(
        self, query: str, *, channel: str = "warm_start", window: DateWindow | None = None
    ) -> SearchRequest:
        """Return a request for `depth` documents restricted to the evaluation pool."""
        return SearchRequest(channel=channel, query=query, window=window,
                             sub_corpora=self.sub_corpora, document_ids=self.document_ids,
                             limit=self.depth)


System = Callable[[EvalQuestion], SystemRun]
SystemFactory = Callable[[EvalConfig], System]
_registry: dict[str, SystemFactory] = {}


def register_system(name: str, factory: SystemFactory) -> None:
    """Make a system available to `evaluate --system NAME`."""
    _registry[name] = factory


PromptPreview = Callable[[EvalQuestion, EvalConfig, Callable[[str], None]], None]
_previews: dict[str, PromptPreview] = {}


def register_prompt_preview(name: str, preview: PromptPreview) -> None:
    """Let `evaluate --system NAME --dry-run` print the prompts NAME would send a model."""
    _previews[name] = preview


def preview_prompts(name: str, question: EvalQuestion, config: EvalConfig,
                    write: Callable[[str], None]) -> None:
    """Write the prompts a system would send for one question, calling no model."""
    if name not in _previews:
        raise KeyError(f"system {name!r} sends no prompts; systems that do: "
                       f"{', '.join(sorted(_previews)) or 'none'}")
    _previews[name](question, config, write)


def system_names() -> list[str]:
    """Return the registered system names."""
    return sorted(_registry)


def build_system(name: str, config: EvalConfig) -> System:
    """Instantiate a registered system for one evaluation."""
    if name not in _registry:
        known = ", ".join(system_names())
        raise KeyError(f"unknown system {name!r}; registered: {known}")
    return _registry[name](config)


def _keys(hits) -> list[str]:
    return [hit.document_key for hit in hits]


def _single(channel: Channel) -> SystemFactory:
    def factory(config: EvalConfig) -> System:
        def run(question: EvalQuestion) -> SystemRun:
            start = time.perf_counter()
            hits = channel.search(config.request(question.question, channel=channel.name))
            return SystemRun(_keys(hits), time.perf_counter() - start)

        return run

    return factory


def _bm25_variant(options: AnalyzerOptions, engine: str | None = None,
                  **scoring) -> SystemFactory:
    single = _single(Bm25Channel(options=options, engine=engine, **scoring))

    def factory(config: EvalConfig) -> System:
        # A variant's index is not kept by the outbox: bring it up to date before the run.
        prepare_index(options, engine)
        return single(config)

    return factory


def _hybrid(with_temporal: bool, weights: dict | None = None) -> SystemFactory:
    def factory(config: EvalConfig) -> System:
        def run(question: EvalQuestion) -> SystemRun:
            start = time.perf_counter()
            window = extract_date_window(question.question) if with_temporal else None
            rankings = warm_start_rankings(config.request(question.question, window=window))
            fused = rrf(rankings, weights=DEFAULT_WEIGHTS if weights is None else weights)
            fused = fused[: config.depth]
            seconds = time.perf_counter() - start
            channel_rankings = {n: _keys(h[:20]) for n, h in rankings.items()}
            return SystemRun(_keys(fused), seconds, channel_rankings=channel_rankings)

        return run

    return factory


def _per_subcorpus(
    channel_names: tuple[str, ...], weights: dict | None = None, include_global: bool = False
) -> SystemFactory:
    def factory(config: EvalConfig) -> System:
        slugs = list(config.sub_corpora or SubCorpus.objects.values_list("slug", flat=True))

        def run(question: EvalQuestion) -> SystemRun:
            start = time.perf_counter()
            fused = per_subcorpus_hybrid(
                config.request(question.question), sub_corpora=slugs, channels=channel_names,
                weights=weights, include_global=include_global,
            )
            return SystemRun(_keys(fused), time.perf_counter() - start)

        return run

    return factory


register_system("bm25", _single(channels.get("bm25")))
register_system("dense", _single(channels.get("dense")))
register_system("hybrid", _hybrid(with_temporal=False))
register_system("hybrid+temporal", _hybrid(with_temporal=True))
# Equal channel weights, kept registered to reproduce the weighting measurements in the docs.
register_system("hybrid-rrf-equal", _hybrid(False, {}))
register_system("hybrid-per-subcorpus-rrf-equal", _per_subcorpus(("bm25", "dense"), {}))
register_system("hybrid-per-subcorpus", _per_subcorpus(("bm25", "dense")))
register_system("bm25-per-subcorpus", _per_subcorpus(("bm25",)))
# Analyzer ablations, kept registered so the measurements in the docs can be reproduced.
register_system("bm25-whoosh-tokens", _bm25_variant(AnalyzerOptions(False, False)))
register_system("bm25-punct-split", _bm25_variant(AnalyzerOptions(True, False)))
register_system("bm25-no-fold", _bm25_variant(AnalyzerOptions(fold_accents=False)))
# Tantivy's analysis here has no stemmer: the stemming variant is measured on whoosh.
register_system("bm25-stem", _bm25_variant(AnalyzerOptions(stem=True), engine="whoosh"))
register_system("bm25-k1.2-b0.75", _bm25_variant(AnalyzerOptions(), k1=1.2, b=0.75))
register_system("bm25-whoosh", _bm25_variant(AnalyzerOptions(), engine="whoosh"))
register_system("bm25-tantivy", _bm25_variant(AnalyzerOptions(), engine="tantivy"))
for _w in (0.1, 0.25, 0.5, 0.75):
    register_system(f"hybrid-dense{_w}", _hybrid(False, {"dense": _w}))
    register_system(f"hybrid-per-subcorpus-dense{_w}", _per_subcorpus(("bm25", "dense"),
                                                                      {"dense": _w}))
    register_system(f"hybrid-per-subcorpus+global-dense{_w}",
                    _per_subcorpus(("bm25", "dense"), {"dense": _w}, include_global=True))
register_system("bm25-per-subcorpus+global", _per_subcorpus(("bm25",), include_global=True))


def _reference(config: EvalConfig) -> System:
    return Bm25sReference(config)


register_system("bm25s-reference", _reference)
