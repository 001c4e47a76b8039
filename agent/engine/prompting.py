"""Render prompt files and fingerprint them."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined

PROMPT_DIR = Path(__file__).resolve().parent / "prompts"

_NEUTRAL = str.maketrans({"<": "‹", ">": "›"})


def neutralise(text: object) -> str:
    """Make untrusted text unable to open or close a data block."""
    return str(text if text is not None else "").translate(_NEUTRAL)


def attr(text: object) -> str:
    """Render untrusted text as a quoted attribute value."""
    return '"' + neutralise(text).replace('"', "'").replace("\n", " ") + '"'


def slug(text: object) -> str:
    """Render a sub-corpus slug bare: only letters, digits, "_" and "-" are kept."""
    return re.sub(r"[^A-Za-z0-9_-]", "", str(text or ""))


def clip(text: object, limit: int) -> str:
    """Cut text to a number of characters, marking the cut."""
    value = str(text or "")
    return value if len(value) <= limit else value[:limit].rstrip() + " […]"


@lru_cache(maxsize=1)
def environment() -> Environment:
    """Build the shared jinja2 environment (StrictUndefined: a missing value is a bug)."""
    env = Environment(
        loader=FileSystemLoader(str(PROMPT_DIR)),
        undefined=StrictUndefined,
        autoescape=False,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=False,
    )
    env.filters["data"] = neutralise
    env.filters["attr"] = attr
    env.filters["clip"] = clip
    env.filters["slug"] = slug
    env.filters["tojson"] = lambda value: json.dumps(value, ensure_ascii=False)
    return env


def render(prompt_name: str, **variables: Any) -> tuple[str, str]:
    """Render the system and user halves of a prompt."""
    env = environment()
    system = env.get_template(f"{prompt_name}.system.j2").render(**variables).strip()
    user = env.get_template(f"{prompt_name}.user.j2").render(**variables).strip()
    return system, user


def prompt_hash(system: str, user: str) -> str:
    """Return the sha256 of a rendered prompt (system, then user)."""
    return hashlib.sha256((system + "\n\x1e\n" + user).encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Prompt:
    """Carry one rendered prompt, named by its file, to the model of the role that answers it."""

    name: str  # the prompt file's stem: "planner", "agent", "rank", ...
    role: str  # "planner", "agent" or "reranker": picks the model
    system: str
    user: str

    @property
    def hash(self) -> str:
        """Return the fingerprint replay and persistence match prompts by."""
        return prompt_hash(self.system, self.user)


def render_prompt(name: str, role: str, **variables: Any) -> Prompt:
    """Render a prompt file into a Prompt for a role."""
    system, user = render(name, **variables)
    return Prompt(name=name, role=role, system=system, user=user)
