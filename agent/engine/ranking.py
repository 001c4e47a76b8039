"""Merge the sub-questions' accepted sets and rank documents by agreement, then by the policy."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

from agent.engine.config import EngineConfig
from agent.engine.events import RankGroup, RankingMade
from agent.engine.policy import Policy, RankContext, RankItem
from agent.engine.recorder import Recorder
from agent.engine.retry import ask_with_retries
from agent.engine.types import AcceptedChunk, HeldChunk


@dataclass(frozen=True)
class Ranking:
    """Hold the final order and the held documents never promoted, as document keys."""

    document_keys: list[str]
    held_document_keys: list[str]


def build_items(accepted: list[list[AcceptedChunk]]) -> dict[str, RankItem]:
    """Collect, per document in first-accepted order, its rationales, signals and sub-questions."""
    items: dict[str, RankItem] = {}
    for index, chunks in enumerate(accepted):
        position = 0
        for chunk in chunks:
            item = items.get(chunk.document_key)
            if item is None:
                item = RankItem(chunk.document_key, chunk.sub_corpus, chunk.title, chunk.date,
                                [], [], [])
                items[chunk.document_key] = item
            if chunk.rationale:
                item.rationales.append(chunk.rationale)
            if chunk.signals is not None:
                item.signals.append(chunk.signals)
            if index not in item.sub_questions:
                item.sub_questions.append(index)
                item.positions.append(position)
                position += 1
    return items


def _order_group(group: list[RankItem], order: list[str]) -> list[str]:
    """Apply a proposed order: unknown ids dropped, repeats ignored, omissions appended."""
    known = [item.document_key for item in group]
    ranked = [doc for doc in dict.fromkeys(order) if doc in known]
    return ranked + [doc for doc in known if doc not in ranked]


def rank(
    *, question: str, accepted: list[list[AcceptedChunk]], held: list[list[HeldChunk]],
    policy: Policy | None, recorder: Recorder, config: EngineConfig,
) -> Ranking:
    """Rank documents by cnt(d), one policy call per group of two or more (none if no policy)."""
    items = build_items(accepted)
    by_count: dict[int, list[RankItem]] = {}
    for item in items.values():
        by_count.setdefault(len(item.sub_questions), []).append(item)
    documents: list[str] = []
    groups: list[RankGroup] = []
    for count in sorted(by_count, reverse=True):
        group = by_count[count]
        order = [item.document_key for item in group]
        used_call = False
        notes = ""
        if len(group) >= 2 and policy is not None:
            ctx = RankContext(question=question, count=count, items=group)
            answer = ask_with_retries(recorder, None, "rank", config.stage_attempts,
                                      partial(policy.rank_group, ctx))
            used_call = answer.model_calls > 0
            if answer.value is not None:
                order = _order_group(group, answer.value.order)
            else:
                notes = (f"ranker reply unusable ({answer.failures[-1].message}); "
                         "first-accepted order kept")
        documents.extend(order)
        groups.append(RankGroup(count=count, documents=tuple(order), llm=used_call,
                                notes=notes))
    held_documents: list[str] = []
    for pool in held:
        for chunk in sorted(pool, key=lambda h: h.order):
            doc = chunk.hit.document_key
            if doc not in items and doc not in held_documents:
                held_documents.append(doc)
    recorder.emit(RankingMade(groups=tuple(groups), ranked=tuple(documents),
                              held_documents=tuple(held_documents)))
    return Ranking(documents, held_documents)
