"""Declare the ports through which the engine talks to the world."""

from __future__ import annotations

from typing import Protocol

from agent.engine.types import Candidate, ChatResult, Event, SearchRequest, SubCorpusInfo


class Retriever(Protocol):
    """Find chunks; implementations honour every constraint and exclusion they are given."""

    def sub_corpora(self) -> list[SubCorpusInfo]: ...

    def warm_start(
        self,
        query: str,
        *,
        sub_corpus: str | None,
        target_date: str | None,
        exclude_chunks: frozenset[int],
        exclude_documents: frozenset[str],
        limit: int,
    ) -> list[Candidate]: ...

    def search(
        self,
        request: SearchRequest,
        *,
        exclude_chunks: frozenset[int],
        exclude_documents: frozenset[str],
        limit: int,
    ) -> list[Candidate]: ...


class ChatModel(Protocol):
    """Complete one JSON-mode prompt for a role ("planner", "agent" or "reranker")."""

    def complete(self, *, role: str, system: str, user: str) -> ChatResult: ...


class EventSink(Protocol):
    """Receive events in order and tell the engine when to stop."""

    def emit(self, event: Event) -> None: ...

    def cancelled(self) -> bool: ...
