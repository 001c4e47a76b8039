"""Hold the engine's tunable bounds."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class EngineConfig:
    """Bound every loop the engine runs."""

    m_max: int = 5
    step_budget: int = 12
    max_raw_steps: int = 36
    warm_start_limit: int = 10
    search_limit: int = 8
    held_pool_size: int = 10
    action_log_window: int = 8
    rationale_max: int = 120
    query_max_chars: int = 500  # longer search queries are cut, with a feedback event
    temporal_widen_days: int = 1
    max_consecutive_parse_failures: int = 3
    planner_attempts: int = 2
    stage_attempts: int = 2  # held re-evaluation, briefing, replan and rank calls
