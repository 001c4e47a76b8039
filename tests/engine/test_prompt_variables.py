"""Check that every prompt renders from its explicit variables, and from nothing else."""

from __future__ import annotations

import pytest
from jinja2 import StrictUndefined, meta

from agent.engine.llm_policy import LLMPolicy
from agent.engine.prompting import PROMPT_DIR, environment, render
from tests.engine.test_prompt_safety import VARIABLES, contexts
from tests.fakes.chat import ScriptedChatModel

SIZES = {"chunk_chars", "held_chars"}  # the policy's own settings, passed to every prompt


def template_variables(name: str) -> set[str]:
    """Return every variable the system and user halves of a prompt read."""
    env = environment()
    found: set[str] = set()
    for half in ("system", "user"):
        source = (PROMPT_DIR / f"{name}.{half}.j2").read_text(encoding="utf-8")
        found |= meta.find_undeclared_variables(env.parse(source))
    return found


def test_prompts_render_with_strict_undefined():
    assert environment().undefined is StrictUndefined


@pytest.mark.parametrize("name", sorted(VARIABLES))
def test_each_prompt_reads_exactly_its_explicit_variables(name):
    variables = VARIABLES[name](contexts()[name])
    read = template_variables(name)
    assert read - SIZES == set(variables), f"{name}: template and mapping disagree"


@pytest.mark.parametrize("name", sorted(VARIABLES))
def test_each_prompt_renders_from_its_explicit_variables_alone(name):
    policy = LLMPolicy(ScriptedChatModel())
    system, user = render(name, chunk_chars=policy.chunk_chars, held_chars=policy.held_chars,
                          **VARIABLES[name](contexts()[name]))
    assert system and user


def test_a_missing_variable_is_an_error_not_an_empty_string():
    variables = VARIABLES["rank"](contexts()["rank"])
    del variables["question"]
    with pytest.raises(Exception, match="question"):
        render("rank", chunk_chars=1, held_chars=1, **variables)
