"""Declare the ports through which the engine talks to the world."""

from __future__ import annotations

from typing import Protocol

from agent.engine.events import Event
from agent.engine.prompting import Prompt
from agent.engine.types import ChatResult
from common.search import Hit, SearchRequest, SubCorpusInfo


class Retriever(Protocol):
    """Find documents, each by one chunk, with its passage (text, title, date) filled in.

    Implementations honour every restriction and exclusion of the request inside the search.
    `warm_start` fuses the channels (the request's window is a target date for the temporal
    channel); `search` runs `request.channel` alone (the window filters, or drives temporal).
    """

    def sub_corpora(self) -> list[SubCorpusInfo]: ...

    def warm_start(self, request: SearchRequest) -> list[Hit]: ...

    def search(self, request: SearchRequest) -> list[Hit]: ...


class ChatModel(Protocol):
    """Complete one JSON-mode prompt with the model of its role ("planner", "agent", "reranker")."""

    def complete(self, prompt: Prompt) -> ChatResult: ...


class EventSink(Protocol):
    """Receive events in order and tell the engine when to stop."""

    def emit(self, event: Event) -> None: ...

    def cancelled(self) -> bool: ...
