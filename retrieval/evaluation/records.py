"""The evaluation's typed records: a question, what a system found for it, the agent's figures."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field


@dataclass(frozen=True)
class EvalQuestion:
    """One question of a questions file, with the document keys that answer it."""

    qid: str
    question: str
    question_type: str
    gold_ids: tuple[str, ...]
    line: int = 0  # where it stands in its file, to name it in an error


@dataclass(frozen=True)
class AgentFigures:
    """What an engine system did besides ranking: the documents it judged, its usage."""

    accepted_ids: tuple[str, ...] = ()
    held_ids: tuple[str, ...] = ()
    rejected_ids: tuple[str, ...] = ()
    surfaced_ids: tuple[str, ...] = ()
    llm_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    engine_seconds: float = 0.0
    model_wait_seconds: float = 0.0

    def to_json(self) -> dict:
        """Return the figures as results.json stores them (lists for the id sets)."""
        return {name: list(value) if isinstance(value, tuple) else value
                for name, value in asdict(self).items()}


@dataclass(frozen=True)
class ResultRow:
    """What one system returned for one question, with the question's gold document keys."""

    ranked_ids: list[str]
    gold_ids: list[str]
    qid: str = ""
    question_type: str = ""
    seconds: float = 0.0
    channel_rankings: dict[str, list[str]] = field(default_factory=dict)
    agent: AgentFigures | None = None
