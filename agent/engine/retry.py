"""Ask a policy for one decision, asking again while its reply cannot be parsed."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from agent.engine.events import FeedbackGiven
from agent.engine.parsing import OutputParseError
from agent.engine.policy import ModelCallSummary
from agent.engine.recorder import Recorder


@dataclass(frozen=True)
class Answer[T]:
    """Hold a decision (None when every attempt failed) and how it was reached."""

    value: T | None
    failures: tuple[FeedbackGiven, ...]  # one parse_failure per unusable reply, in order
    model_calls: int  # over every attempt


def ask_with_retries[T](
    recorder: Recorder,
    sub_question_index: int | None,
    stage: str,
    attempts: int,
    decide: Callable[[list[ModelCallSummary]], T],
) -> Answer[T]:
    """Run `decide` up to `attempts` times (at least once) until its reply parses.

    Every model call is recorded as it happens, a failed one included, and every unusable reply
    is emitted as a parse_failure feedback event naming the stage and the attempt; the prompt
    asked again is the same prompt.
    """
    calls_before = recorder.counters.llm_calls
    failures: list[FeedbackGiven] = []
    value: T | None = None
    for attempt in range(1, max(1, attempts) + 1):
        try:
            value = recorder.invoke(sub_question_index, decide)
            break
        except OutputParseError as exc:
            failure = FeedbackGiven(reason="parse_failure", message=str(exc), stage=stage,
                                    attempt=attempt)
            failures.append(failure)
            recorder.emit(failure, sub_question_index=sub_question_index)
    return Answer(value, tuple(failures), recorder.counters.llm_calls - calls_before)
