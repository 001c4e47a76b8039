"""Typed readers for TRACE_* environment variables that fail loudly on bad values."""

from __future__ import annotations

import os
from pathlib import Path
from typing import overload


class ConfigError(RuntimeError):
    """A TRACE_* environment variable is malformed."""


@overload
def env_str(name: str) -> str | None: ...
@overload
def env_str(name: str, default: str) -> str: ...
@overload
def env_str(name: str, default: None) -> str | None: ...


def env_str(name: str, default: str | None = None) -> str | None:
    """Return the variable's text, or the default when unset or empty."""
    value = os.environ.get(name, "").strip()
    return value if value else default


def env_bool(name: str, default: bool) -> bool:
    """Parse 1/0, true/false, yes/no, on/off."""
    raw = env_str(name)
    if raw is None:
        return default
    lowered = raw.lower()
    if lowered in {"1", "true", "yes", "on"}:
        return True
    if lowered in {"0", "false", "no", "off"}:
        return False
    raise ConfigError(f"{name} must be a boolean (1/0, true/false, yes/no, on/off), got {raw!r}")


def env_int(name: str, default: int) -> int:
    """Parse an integer."""
    raw = env_str(name)
    if raw is None:
        return default
    try:
        return int(raw)
    except ValueError:
        raise ConfigError(f"{name} must be an integer, got {raw!r}") from None


def env_float(name: str, default: float) -> float:
    """Parse a float."""
    raw = env_str(name)
    if raw is None:
        return default
    try:
        return float(raw)
    except ValueError:
        raise ConfigError(f"{name} must be a number, got {raw!r}") from None


def env_list(name: str, default: list[str]) -> list[str]:
    """Parse a comma-separated list."""
    raw = env_str(name)
    if raw is None:
        return list(default)
    return [item.strip() for item in raw.split(",") if item.strip()]


def env_path(name: str, default: Path) -> Path:
    """Return an absolute path."""
    raw = env_str(name)
    return Path(raw).expanduser().resolve() if raw else default.resolve()


def env_choice(name: str, default: str, choices: set[str]) -> str:
    """Return one of a fixed set of values."""
    value = env_str(name, default) or default
    if value not in choices:
        raise ConfigError(f"{name} must be one of {sorted(choices)}, got {value!r}")
    return value
