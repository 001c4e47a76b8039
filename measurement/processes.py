"""Stopping a server a benchmark started (in its own process group, as `serve` runs)."""

from __future__ import annotations

import os
import signal
import subprocess


def stop_process_group(proc: subprocess.Popen, *, grace_seconds: float) -> None:
    """Interrupt the group as Ctrl-C would; kill it if it has not ended within the grace time."""
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGINT)
        try:
            proc.wait(timeout=grace_seconds)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
