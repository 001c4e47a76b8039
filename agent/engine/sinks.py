"""Collect events in memory, for callers that keep a run's events and persist nothing."""

from __future__ import annotations

from dataclasses import dataclass, field

from agent.engine.events import Event


@dataclass
class ListSink:
    """Keep every event in order; never asks the engine to stop."""

    events: list[Event] = field(default_factory=list)

    def emit(self, event: Event) -> None:
        """Store the event."""
        self.events.append(event)

    def cancelled(self) -> bool:
        """Never cancel."""
        return False

    def kinds(self) -> list[str]:
        """List event kinds in order."""
        return [event.kind for event in self.events]

    def of(self, kind: str) -> list[Event]:
        """List events of one kind."""
        return [event for event in self.events if event.kind == kind]
