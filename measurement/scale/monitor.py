"""Peak resident memory of the benchmark, its worker processes and the Postgres server."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

import psutil


def _tree_rss(pid: int | None) -> int:
    if pid is None:
        return 0
    try:
        root = psutil.Process(pid)
        processes = [root, *root.children(recursive=True)]
    except psutil.Error:
        return 0
    total = 0
    for process in processes:
        try:
            total += process.memory_info().rss
        except psutil.Error:
            continue
    return total


@dataclass
class RssMonitor:
    """Sample RSS every ``interval`` seconds; keep the peaks (bytes) since the last ``reset``."""

    own_pid: int
    postgres_pid: int | None
    interval: float = 0.5
    peaks: dict[str, int] = field(default_factory=dict)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def reset(self) -> None:
        """Forget the peaks seen so far."""
        self.peaks = {"python": 0, "postgres": 0, "total": 0}

    def sample(self) -> None:
        """Take one sample now."""
        python = _tree_rss(self.own_pid)
        postgres = _tree_rss(self.postgres_pid)
        for name, value in (("python", python), ("postgres", postgres),
                            ("total", python + postgres)):
            self.peaks[name] = max(self.peaks.get(name, 0), value)

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self.sample()

    def start(self) -> RssMonitor:
        """Start sampling in a background thread."""
        self.reset()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop sampling."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()

    def peaks_mb(self) -> dict[str, float]:
        """Return the peaks in megabytes."""
        self.sample()
        return {name: round(value / 2**20, 1) for name, value in self.peaks.items()}
