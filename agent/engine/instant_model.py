"""A deterministic, instant chat model for benchmarking the engine without an endpoint.

``InstantModel`` answers every engine prompt at once with a schema-valid reply chosen by the
prompt's name (``plausible_reply``): it measures the engine's own time, never a model's judgement.
The stub OpenAI-compatible server of the tests serves the same replies over HTTP.
"""

from __future__ import annotations

import json
import re

from agent.engine.prompting import Prompt
from agent.engine.types import ChatResult
from common.usage import TokenUsage

_SLUG = re.compile(r"slug=(\S+)")
_QUESTION = re.compile(r"^(?:Question q|Original question q): (.*)$", re.MULTILINE)
_CHUNK = re.compile(r'<document chunk_id="(\d+)"')
_RANKED = re.compile(r'<rationale document="([^"]*)"')
_SPAN = re.compile(r'<document source="(\d+)" span="(\d+)"[^\n]*\n(.*)')


def plausible_reply(prompt: Prompt) -> str:
    """Return a schema-valid JSON reply for any engine prompt, chosen by the prompt's name."""
    user = prompt.user
    question_match = _QUESTION.search(user)
    question = question_match.group(1).strip() if question_match else "question"
    memory = {"prior_findings": "", "question_analysis": question[:200],
              "evidence_gathered": "", "gaps_remaining": "", "next_steps": ""}
    if prompt.name == "planner":
        slugs = _SLUG.findall(user)[:2] or [None]
        return json.dumps({"sub_questions": [
            {"text": question, "target_sub_corpus": slug, "entities": [], "target_date": None}
            for slug in slugs]})
    if prompt.name == "replan":
        return json.dumps({"remaining": None, "rationale": "plan kept"})
    if prompt.name == "held":
        return json.dumps({"promotions": [], "rationale": "nothing new"})
    if prompt.name == "briefing":
        return json.dumps({"summary": "stub briefing", "confirmed_facts": [],
                           "confirmed_dates": [], "confirmed_entities": [], "gaps": [],
                           "search_hints": []})
    if prompt.name == "rank":
        return json.dumps({"order": _RANKED.findall(user)})
    if prompt.name == "answer":
        first_spans: dict[int, tuple[int, str]] = {}
        for number, span, text in _SPAN.findall(user):
            first_spans.setdefault(int(number), (int(span), text.strip()))
        return json.dumps({"sentences": [
            {"text": f"Source {number}: {text[:120]}", "citations": [
                {"source": number, "span": span}]}
            for number, (span, text) in first_spans.items()]})
    if prompt.name == "agent":
        pending = _CHUNK.findall(user)
        if pending:
            verdicts = [{"chunk_id": int(cid), "verdict": "accept" if i == 0 else "reject",
                         "rationale": "first chunk of the batch" if i == 0 else "not relevant"}
                        for i, cid in enumerate(pending)]
            return json.dumps({"thought": "review", "action": "review",
                               "args": {"verdicts": verdicts}, "memory_update": memory})
        return json.dumps({"thought": "done", "action": "finish", "args": {},
                           "memory_update": memory})
    return json.dumps({"error": f"unknown prompt {prompt.name!r}"})


class InstantModel:
    """Answer every prompt at once with a plausible schema-valid reply."""

    def complete(self, prompt: Prompt) -> ChatResult:
        """Reply without waiting."""
        text = plausible_reply(prompt)
        return ChatResult(text=text, model="instant",
                          usage=TokenUsage(len(prompt.user) // 4, len(text) // 4))
