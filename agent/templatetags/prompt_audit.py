"""Template tag that fetches the stored model call behind a verdict, shown on demand."""

from __future__ import annotations

from django import template

from agent.models import LLMCall, Verdict
from agent.review.prompt_audit import model_call_for_verdict

register = template.Library()


@register.simple_tag
def verdict_model_call(verdict: Verdict) -> LLMCall | None:
    """Return the model call (with its exact prompts) that decided a verdict, if any."""
    return model_call_for_verdict(verdict) if isinstance(verdict, Verdict) else None
