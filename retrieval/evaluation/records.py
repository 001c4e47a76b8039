"""The evaluation's typed records: a question, what a system found for it, the agent's figures."""

from __future__ import annotations

from dataclasses import dataclass, field, fields

from common.usage import TokenUsage


@dataclass(frozen=True)
class EvalQuestion:
    """One question of a questions file, with the document keys that answer it.

    The file spells them `gold_ids` (a published column); here they are what they hold: keys.
    """

    qid: str
    question: str
    question_type: str
    gold_keys: tuple[str, ...]
    line: int = 0  # where it stands in its file, to name it in an error
    reference_answer: str = ""  # the file's optional `answer` column


@dataclass(frozen=True)
class AgentFigures:
    """What an engine system did besides ranking: the documents it judged, its usage."""

    accepted_keys: tuple[str, ...] = ()
    held_keys: tuple[str, ...] = ()
    rejected_keys: tuple[str, ...] = ()
    surfaced_keys: tuple[str, ...] = ()
    llm_calls: int = 0
    usage: TokenUsage = TokenUsage()
    engine_seconds: float = 0.0
    model_wait_seconds: float = 0.0
    oracle_decisions: int = 0  # the oracle judge's decisions and flipped ones (0 otherwise)
    oracle_errors: int = 0
    cost: float = 0.0  # priced with the configured per-million-token prices
    quoted_words: int = 0  # words the rationales quote
    false_claims: tuple[dict, ...] = ()  # quoted words their chunk does not print (must be none)

    def to_json(self) -> dict:
        """Return the figures as results.json publishes them (`accepted_ids`: lists of keys)."""
        flat = {f.name: getattr(self, f.name) for f in fields(self)} | self.usage.as_fields()
        return {name.replace("_keys", "_ids"): list(flat[name]) if isinstance(flat[name], tuple)
                else flat[name] for name in FIGURES_JSON}


# The figures' keys in results.json, in their published order (the usage as three counts).
FIGURES_JSON = ("accepted_keys", "held_keys", "rejected_keys", "surfaced_keys", "llm_calls",
                "input_tokens", "output_tokens", "engine_seconds", "model_wait_seconds",
                "oracle_decisions", "oracle_errors", "cached_tokens", "cost", "quoted_words",
                "false_claims")


@dataclass(frozen=True)
class ResultRow:
    """What one system returned for one question, with the question's gold document keys."""

    ranked_keys: list[str]
    gold_keys: list[str]
    qid: str = ""
    question_type: str = ""
    seconds: float = 0.0
    channel_rankings: dict[str, list[str]] = field(default_factory=dict)
    agent: AgentFigures | None = None
