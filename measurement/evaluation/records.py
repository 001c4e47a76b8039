"""The evaluation's typed records: a question, what a system found for it, the agent's figures."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields
from typing import Any

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
class FalseClaim:
    """A word a rationale quotes that its chunk does not print."""

    chunk_id: int
    word: str
    rationale: str


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
    false_claims: tuple[FalseClaim, ...] = ()  # must be none

    def to_json(self) -> dict[str, Any]:
        """Return the figures as results.json publishes them (`accepted_ids`: lists of keys)."""
        flat: dict[str, Any] = {f.name: getattr(self, f.name) for f in fields(self)}
        flat |= self.usage.as_fields()
        flat["false_claims"] = [asdict(claim) for claim in self.false_claims]
        return {name.replace("_keys", "_ids"): list(flat[name]) if isinstance(flat[name], tuple)
                else flat[name] for name in FIGURES_JSON}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> AgentFigures:
        """Read the figures back from results.json (a figure it lacks keeps its default)."""
        values: dict[str, Any] = {}
        for f in fields(cls):
            stored = f.name.replace("_keys", "_ids")
            if f.name.endswith("_keys") and stored in data:
                values[f.name] = tuple(data[stored])
            elif f.name == "false_claims":
                values[f.name] = tuple(FalseClaim(**claim) for claim in data.get(f.name, ()))
            elif f.name == "usage":
                values[f.name] = TokenUsage.from_fields(data)
            elif f.name in data:
                values[f.name] = data[f.name]
        return cls(**values)


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
    # Each gold document's rank in the whole ranking, as results.json kept it (None: not
    # ranked); set on a row read back, whose `ranked_keys` are only the kept top.
    gold_ranks: dict[str, int | None] | None = None

    def to_json(self, keep_ranked: int) -> dict[str, Any]:
        """Return the row as results.json's `per_question` keeps it: its top `keep_ranked`
        documents, and each gold document's rank in the whole ranking (None: not ranked)."""
        data: dict[str, Any] = {
            "qid": self.qid,
            "question_type": self.question_type,
            "ranked_ids": self.ranked_keys[:keep_ranked],
            "gold_ids": self.gold_keys,
            "gold_ranks": self.gold_ranks if self.gold_ranks is not None else {
                g: (self.ranked_keys.index(g) + 1 if g in self.ranked_keys else None)
                for g in self.gold_keys},
            "seconds": round(self.seconds, 5),
        }
        if self.agent is not None:
            data["extras"] = self.agent.to_json()
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ResultRow:
        """Read a `per_question` row back: its ranking is the part results.json kept."""
        extras = data.get("extras")
        return cls(ranked_keys=list(data["ranked_ids"]), gold_keys=list(data["gold_ids"]),
                   qid=data.get("qid", ""), question_type=data.get("question_type", ""),
                   seconds=data.get("seconds", 0.0),
                   agent=None if extras is None else AgentFigures.from_json(extras),
                   gold_ranks=data.get("gold_ranks"))


def _published(name: str) -> str:
    """Name a figure as results.json does: `all_gold_at_10` is `all_gold@10`."""
    return name.replace("_at_", "@")


@dataclass(frozen=True)
class AgentMetrics:
    """An engine system's figures over a group of questions: acceptance, usage, misses."""

    p_acc: float
    r_acc: float
    accepted_mean: float
    llm_calls_mean: float
    input_tokens_mean: float
    output_tokens_mean: float
    cost_mean: float
    quoted_words: int  # words the rationales quote, and those their passage does not print
    false_claims: int
    engine_seconds_median: float
    model_wait_seconds_median: float
    missed_gold_at_10: int
    miss_attribution: dict[str, float]  # the share of the missed gold documents per cause

    def to_json(self) -> dict[str, Any]:
        return {_published(f.name): getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True)
class Metrics:
    """The figures of one group of questions (all of them, or those of one type).

    An empty group has only `n` (0). The channel figures are None for a system without
    several channels; `agent` is None for a system that only ranks.
    """

    n: int
    recall: dict[int, float] = field(default_factory=dict)  # recall@k by k
    mrr: float = 0.0
    all_gold_at_10: float = 0.0
    latency_median_ms: float = 0.0
    latency_p95_ms: float = 0.0
    bm25_dense_jaccard_at_20: float | None = None
    fused_gold_at_20_single_channel_share: float | None = None
    agent: AgentMetrics | None = None

    def to_json(self) -> dict[str, Any]:
        """Return the figures under results.json's keys (`recall@10`, `all_gold@10`...)."""
        if not self.n:
            return {"n": 0}
        data: dict[str, Any] = {"n": self.n}
        data |= {f"recall@{k}": value for k, value in self.recall.items()}
        data |= {"mrr": self.mrr, "all_gold@10": self.all_gold_at_10,
                 "latency_median_ms": self.latency_median_ms,
                 "latency_p95_ms": self.latency_p95_ms}
        for name in ("bm25_dense_jaccard_at_20", "fused_gold_at_20_single_channel_share"):
            if getattr(self, name) is not None:
                data[_published(name)] = getattr(self, name)
        if self.agent is not None:
            data |= self.agent.to_json()
        return data


@dataclass(frozen=True)
class GroupRecall:
    """Recall@k of the gold documents of one group (a sub-corpus, a genre)."""

    k: int
    recall: float
    n_gold: int

    def to_json(self) -> dict[str, Any]:
        return {f"recall@{self.k}": self.recall, "n_gold": self.n_gold}


@dataclass(frozen=True)
class RunContext:
    """What a results document was measured on: code, corpus, model, questions, pool, settings."""

    git_revision: str
    corpus_revision: int
    embedding_model: str
    questions_file: str
    question_selection: dict[str, int | None]
    pool: dict[str, Any]  # `pool.describe_pool`
    settings: dict[str, Any]  # the retrieval settings in force, `pool` the pool's label

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class SystemResult:
    """One system's results over a questions file: results.json (`to_json`)."""

    system: str
    ks: tuple[int, ...]
    overall: Metrics
    by_type: dict[str, Metrics]
    by_gold_sub_corpus: dict[str, GroupRecall]
    by_gold_genre: dict[str, GroupRecall]
    questions: list[ResultRow]
    context: RunContext
    keep_ranked: int = 20  # ranked documents results.json keeps per question

    @property
    def n_questions(self) -> int:
        return len(self.questions)

    def to_json(self) -> dict[str, Any]:
        return {
            "system": self.system,
            "n_questions": self.n_questions,
            "ks": list(self.ks),
            "overall": self.overall.to_json(),
            "by_type": {name: metrics.to_json() for name, metrics in self.by_type.items()},
            "by_gold_sub_corpus": {name: group.to_json()
                                   for name, group in self.by_gold_sub_corpus.items()},
            "by_gold_genre": {name: group.to_json() for name, group in self.by_gold_genre.items()},
            "per_question": [row.to_json(self.keep_ranked) for row in self.questions],
            **self.context.to_json(),
        }


@dataclass
class SystemRun:
    """What a system returns for one question: ranked document keys, time, and what it saw."""

    ranked_keys: list[str]
    seconds: float
    channel_rankings: dict[str, list[str]] = field(default_factory=dict)  # fused systems
    agent: AgentFigures | None = None  # engine systems
