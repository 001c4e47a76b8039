"""Number events, count model usage and invoke policies so every call is recorded."""

from __future__ import annotations

from collections.abc import Callable

from agent.engine.events import Event, ModelCalled
from agent.engine.policy import ModelCallSummary
from agent.engine.ports import EventSink
from agent.engine.types import Counters


class Recorder:
    """Emit events with deterministic sequence numbers and keep the counters."""

    def __init__(self, sink: EventSink) -> None:
        self.sink = sink
        self.seq = 0
        self.counters = Counters()
        # The seq of the latest llm_call event of the latest decision (None: no model call).
        self.last_model_call_seq: int | None = None

    def emit(self, event: Event, *, sub_question_index: int | None = None) -> None:
        """Stamp the event with the next sequence number and its sub-question, and send it."""
        self.seq += 1
        self.sink.emit(event.stamped(self.seq, sub_question_index))

    def cancelled(self) -> bool:
        """Ask the sink whether to stop."""
        return bool(self.sink.cancelled())

    def record_calls(self, sub_question_index: int | None, calls: list[ModelCallSummary]) -> None:
        """Emit one llm_call event per model call and add it to the counters."""
        for call in calls:
            self.counters.llm_calls += 1
            self.counters.usage += call.usage
            self.counters.model_seconds += call.seconds
            self.emit(ModelCalled(
                role=call.role, prompt_name=call.prompt_name, prompt_hash=call.prompt_hash,
                model=call.model, usage=call.usage, seconds=call.seconds),
                sub_question_index=sub_question_index)
            self.last_model_call_seq = self.seq
        calls.clear()

    def invoke[T](self, sub_question_index: int | None,
                  decide: Callable[[list[ModelCallSummary]], T]) -> T:
        """Run one policy decision; its model calls are recorded even when parsing fails."""
        calls: list[ModelCallSummary] = []
        self.last_model_call_seq = None
        try:
            return decide(calls)
        finally:
            self.record_calls(sub_question_index, calls)
