"""Merge the sub-questions' accepted sets and rank documents by agreement, then by the policy."""

from __future__ import annotations

from dataclasses import dataclass

from agent.engine.config import EngineConfig
from agent.engine.events import Recorder
from agent.engine.parsing import OutputParseError
from agent.engine.policy import Policy, RankContext, RankItem
from agent.engine.types import AcceptedChunk, HeldChunk


@dataclass(frozen=True)
class Ranking:
    """Hold the final order and the held documents never promoted."""

    documents: list[str]
    held_documents: list[str]


def build_items(accepted: list[list[AcceptedChunk]]) -> dict[str, RankItem]:
    """Collect, per document in first-accepted order, its rationales and sub-questions."""
    items: dict[str, RankItem] = {}
    for index, chunks in enumerate(accepted):
        position = 0
        for chunk in chunks:
            item = items.get(chunk.document_id)
            if item is None:
                item = RankItem(chunk.document_id, chunk.sub_corpus, chunk.title, chunk.date,
                                [], [], [])
                items[chunk.document_id] = item
            if chunk.rationale:
                item.rationales.append(chunk.rationale)
            if index not in item.sub_questions:
                item.sub_questions.append(index)
                item.positions.append(position)
                position += 1
    return items


def _order_group(group: list[RankItem], order: list[str]) -> list[str]:
    """Apply a proposed order: unknown ids dropped, repeats ignored, omissions appended."""
    known = [item.document_id for item in group]
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
    groups = []
    for count in sorted(by_count, reverse=True):
        group = by_count[count]
        order = [item.document_id for item in group]
        used_call = False
        notes = ""
        if len(group) >= 2 and policy is not None:
            ctx = RankContext(question=question, count=count, items=group)
            for _ in range(max(1, config.stage_attempts)):
                try:
                    calls_made: list[int] = []

                    def decide(calls, ctx=ctx, calls_made=calls_made):  # type: ignore[no-untyped-def]
                        output = policy.rank_group(ctx, calls)
                        calls_made.append(len(calls))
                        return output

                    output = recorder.invoke(None, decide)
                    used_call = bool(calls_made and calls_made[0])
                    order = _order_group(group, output.order)
                    break
                except OutputParseError as exc:
                    used_call = True
                    notes = f"ranker reply unusable ({exc}); first-accepted order kept"
        documents.extend(order)
        groups.append({"count": count, "documents": order, "llm": used_call, "notes": notes})
    held_documents: list[str] = []
    for pool in held:
        for chunk in sorted(pool, key=lambda h: h.order):
            doc = chunk.candidate.document_id
            if doc not in items and doc not in held_documents:
                held_documents.append(doc)
    recorder.emit("rank", None, {"groups": groups, "ranked": documents,
                                 "held_documents": held_documents})
    return Ranking(documents, held_documents)
