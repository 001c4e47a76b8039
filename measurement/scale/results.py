"""Benchmark results per size, saved as JSON after every stage so a rerun resumes."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from measurement.evaluation.metrics import median, percentile


@dataclass
class SizeResults:
    """The figures of one archive size, stage by stage, kept in ``path``."""

    path: Path
    data: dict = field(default_factory=dict)

    @classmethod
    def load(cls, path: Path) -> SizeResults:
        """Read the results saved so far (none when the file is missing)."""
        data = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
        return cls(path=path, data=data)

    def done(self, stage: str) -> bool:
        """Say whether ``stage`` finished in an earlier or this run."""
        return stage in self.data.get("stages", {})

    def record(self, stage: str, figures: dict) -> None:
        """Save the figures of a finished stage."""
        self.data.setdefault("stages", {})[stage] = figures
        self.save()

    def stage(self, stage: str) -> dict:
        """Return the figures of ``stage`` (empty when it has not run)."""
        return self.data.get("stages", {}).get(stage, {})

    def save(self) -> None:
        """Write the results atomically."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        temporary = self.path.with_suffix(".tmp")
        temporary.write_text(json.dumps(self.data, indent=1, sort_keys=True), encoding="utf-8")
        temporary.replace(self.path)


def percentiles(milliseconds: list[float]) -> dict:
    """Return p50 and p95 (ms; `metrics.percentile`, interpolated) and the count of
    ``milliseconds``."""
    if not milliseconds:
        return {"n": 0}
    return {"n": len(milliseconds), "p50": round(median(milliseconds), 2),
            "p95": round(percentile(milliseconds, 95), 2), "max": round(max(milliseconds), 2)}
