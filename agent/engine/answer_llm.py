"""Draft a cited answer with a chat model, keeping only sentences that cite an accepted source.

The prompt (`prompts/answer.*.j2`) shows each accepted source's evidence passages as numbered
data blocks, `<document source=N span=K>`; the model replies with sentences, each naming the
(source, span) pairs it rests on. Every pair is checked against the material: a pair naming no
accepted source or no span of it is removed, and a sentence left with no citation (or that is not
a sentence at all) is dropped and counted, never shown as cited. A reply that is not a JSON object
with a list of sentences is asked again once.
"""

from __future__ import annotations

import time

from pydantic import ValidationError

from agent.engine.answer import (
    AnswerDrafter,
    AnswerMaterial,
    AnswerSection,
    AnswerSentence,
    CitedSpan,
    DraftedAnswer,
)
from agent.engine.parsing import OutputParseError, parse_output
from agent.engine.policy import ModelCallSummary
from agent.engine.ports import ChatModel
from agent.engine.prompt_variables import answer_variables
from agent.engine.prompting import Prompt, render_prompt
from agent.engine.schemas import AnswerOutput, DraftedSentence

ROLE = "agent"  # the model that read the passages and wrote the briefings writes the answer too
ATTEMPTS = 2


class AnswerReplyError(ValueError):
    """Every reply of the model was unusable: no draft can be made from them."""


def answer_prompt(material: AnswerMaterial) -> Prompt:
    """Render the prompt the LLM drafter sends."""
    return render_prompt("answer", ROLE, **answer_variables(material))


def model_answer(material: AnswerMaterial, chat: ChatModel, *,
                 attempts: int = ATTEMPTS) -> DraftedAnswer:
    """Ask the model for a cited answer; keep the sentences whose citations hold."""
    prompt = answer_prompt(material)
    calls: list[ModelCallSummary] = []
    problems: list[str] = []
    reply = ""
    for _ in range(max(1, attempts)):
        started = time.perf_counter()
        result = chat.complete(prompt)
        reply = result.text
        calls.append(ModelCallSummary(
            role=prompt.role, prompt_name=prompt.name, prompt_hash=prompt.hash,
            model=result.model, usage=result.usage, seconds=time.perf_counter() - started))
        try:
            output = parse_output(reply, AnswerOutput)
        except OutputParseError as exc:
            problems.append(str(exc))
            continue
        sentences, dropped = checked_sentences(output.sentences, material)
        section = AnswerSection("", tuple(sentences))
        return DraftedAnswer(AnswerDrafter.LLM, (section,) if sentences else (),
                             dropped=dropped, model_calls=tuple(calls), reply=reply)
    raise AnswerReplyError(
        f"The model's reply could not be read ({len(calls)} attempt"
        f"{'s' if len(calls) != 1 else ''}: {problems[-1]}).")


def checked_sentences(items: list[object],
                      material: AnswerMaterial) -> tuple[list[AnswerSentence], int]:
    """Return the sentences that cite at least one real span, and how many were dropped."""
    kept: list[AnswerSentence] = []
    dropped = 0
    for item in items:
        try:
            sentence = DraftedSentence.model_validate(item)
        except ValidationError:
            dropped += 1  # not a sentence: garbage, an empty text, a citation that is no pair
            continue
        text = " ".join(sentence.text.split())
        citations = _valid_citations(sentence, material)
        if not text or not citations:
            dropped += 1
            continue
        kept.append(AnswerSentence(text, citations))
    return kept, dropped


def _valid_citations(sentence: DraftedSentence,
                     material: AnswerMaterial) -> tuple[CitedSpan, ...]:
    found: list[CitedSpan] = []
    for cited in sentence.citations:
        source = material.source(cited.source)
        if source is None or not 1 <= cited.span <= len(source.passages):
            continue
        passage = source.passages[cited.span - 1]
        span = CitedSpan(source.number, source.document_key, passage.start, passage.end)
        if span not in found:
            found.append(span)
    return tuple(sorted(found, key=lambda c: (c.number, c.start)))
