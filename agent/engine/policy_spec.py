"""Name the policy an investigation runs with: its kind, its label, its model per role, its cost."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from common.usage import TokenUsage

OFFLINE_LABEL = "offline policy (no LLM)"


class PolicyKind(StrEnum):
    """Say what decides: deterministic rules, or a chat model."""

    OFFLINE = "offline"
    LLM = "llm"


@dataclass(frozen=True)
class PolicySpec:
    """Describe a policy as shown and billed: kind, label, model per role, per-token prices."""

    kind: PolicyKind
    models: dict[str, str] = field(default_factory=dict)  # model name per role; {} offline
    price_input_per_million: float = 0.0
    price_output_per_million: float = 0.0

    @property
    def label(self) -> str:
        """Return the label shown wherever an investigation says what decided it."""
        if self.kind is PolicyKind.LLM:
            return f"LLM: {self.models.get('agent', '')}"
        return OFFLINE_LABEL

    def cost(self, usage: TokenUsage) -> float:
        """Price model usage from the per-million-token prices."""
        return (usage.input_tokens * self.price_input_per_million
                + usage.output_tokens * self.price_output_per_million) / 1_000_000
