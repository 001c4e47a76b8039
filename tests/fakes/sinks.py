"""Interrupt a run: a collecting sink that cancels or fails after a number of events."""

from __future__ import annotations

from dataclasses import dataclass

from agent.engine.events import Event
from agent.engine.sinks import ListSink


@dataclass
class InterruptingSink(ListSink):
    """Collect events; ask to cancel, or fail like a lost database, after a number of events."""

    cancel_after: int | None = None
    fail_after: int | None = None

    def emit(self, event: Event) -> None:
        """Store the event, or fail as configured."""
        if self.fail_after is not None and len(self.events) >= self.fail_after:
            raise RuntimeError("sink failure")
        super().emit(event)

    def cancelled(self) -> bool:
        """Report cancellation once enough events have arrived."""
        return self.cancel_after is not None and len(self.events) >= self.cancel_after
