"""Measure how often a verdict's evidence span holds the answer to a dev question.

For every question of a question file (each with an `answer`), runs the engine over the archive
with two policies and inspects every accepted verdict's evidence span (one to three sentences):

- `offline`: the rule-based policy, which quotes the sentences richest in the question's words;
- `scripted`: the LLM policy driven by a scripted chat model (no model involved). It plans one
  sub-question over the whole archive, accepts the first three chunks of the warm start and
  rejects the rest, then finishes; for each chunk it quotes the sentence of the chunk's visible
  text (as the prompt shows it, clipped) that shares most words with the question, copied as
  shown for odd positions in the batch and retyped without accents, case or line breaks for even
  ones, so that both the exact and the tolerant location are exercised.

An answer is long prose, so besides the whole answer string the check looks for its key
entities: quoted phrases, people ("M. Lejeune" counts as found when "Lejeune" is), other
capitalised names that are not a sub-corpus's name, and numbers of two digits or more. Matching
ignores case, accents, blanks and punctuation. For scale, the same check runs on the whole chunk
(the ceiling: a span cannot find what its chunk lacks) and on the chunk's first 400 characters
(what exports quoted before evidence spans existed).

    .venv/bin/python measurement/scripts/measure_evidence.py --limit 50 \
        --out docs/evidence-measurement.md
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "trace_site.settings")

import django  # noqa: E402

django.setup()

from tqdm import tqdm  # noqa: E402

from agent.engine import EngineConfig, LLMPolicy, OfflinePolicy, run_investigation  # noqa: E402
from agent.engine.events import VerdictGiven  # noqa: E402
from agent.engine.evidence import sentences  # noqa: E402
from agent.engine.instant_model import plausible_reply  # noqa: E402
from agent.engine.sinks import ListSink  # noqa: E402
from agent.engine.text import content_terms, extract_entities, surnames  # noqa: E402
from agent.engine.types import ChatResult  # noqa: E402
from agent.investigations.retriever import ArchiveRetriever  # noqa: E402
from archive.models import Chunk  # noqa: E402
from common.text import casefold_without_accents  # noqa: E402
from measurement.evaluation.metrics import median  # noqa: E402

DEFAULT_QUESTIONS = ROOT / "demo" / "historiqa" / "questions_dev.jsonl"
FIRST_CHARS = 400
_QUOTED = re.compile(
    r"(?:^|(?<=[\s(]))[«\"“'‘]\s*([^«»\"“”'‘’]{5,80}?)\s*[»\"”'’](?=[\s.,;:)!?]|$)")
_NUMBER = re.compile(r"\d[\d  ,.]*\d")
_GENERIC = {"la presse", "le journal", "la chambre", "le gaulois", "l'intransigeant",
            "l’intransigeant", "journal officiel", "il", "elle", "les", "le", "la"}


def _normalised(text: str) -> str:
    return "".join(ch for ch in casefold_without_accents(text) if ch.isalnum())


def key_entities(answer: str, sub_corpus_names: list[str]) -> list[str]:
    """Return the answer's key entities, as the strings to look for."""

    names = {casefold_without_accents(name) for name in sub_corpus_names} | _GENERIC
    keys: list[str] = [m.group(1).strip() for m in _QUOTED.finditer(answer)]
    for entity in extract_entities(answer):
        if len(entity) < 4 or any(casefold_without_accents(entity) in name for name in names):
            continue
        keys.extend(surnames([entity]) if entity.startswith(("M. ", "MM. ", "Mme ")) else [entity])
    keys += [m.group(0) for m in _NUMBER.finditer(answer)
             if len(re.sub(r"\D", "", m.group(0))) >= 2]
    return [k for k in dict.fromkeys(keys) if len(_normalised(k)) >= 3]


def holds(text: str, needles: list[str]) -> bool:
    """Tell whether any needle occurs in the text, ignoring case, accents, blanks, punctuation."""
    hay = _normalised(text)
    return any(_normalised(n) in hay for n in needles if _normalised(n))


class QuotingChatModel:
    """Answer every engine prompt from rules: the scripted model described in the module doc."""

    model = "scripted-quoting"

    def __init__(self) -> None:
        self.quotes = 0

    def complete(self, prompt):  # noqa: ANN001, ANN201 - the ChatModel port
        user = prompt.user
        question = re.search(r"^(?:Question q|Original question q): (.*)$", user, re.MULTILINE)
        terms = set(content_terms(question.group(1) if question else ""))
        memory = {"prior_findings": "", "question_analysis": "", "evidence_gathered": "",
                  "gaps_remaining": "", "next_steps": ""}
        if prompt.name == "planner":
            text = json.dumps({"sub_questions": [{"text": question.group(1) if question else "",
                                                  "target_sub_corpus": None, "entities": [],
                                                  "target_date": None}]})
        elif prompt.name == "agent":
            blocks = re.findall(r'<document chunk_id="(\d+)"[^\n]*>\n(.*?)\n</document>', user,
                                re.DOTALL)
            if blocks:
                verdicts = []
                for position, (chunk_id, shown) in enumerate(blocks, start=1):
                    spans = sentences(shown) or [(0, len(shown))]
                    best = max(spans, key=lambda s: (len(terms & set(content_terms(
                        shown[s[0]:s[1]]))), -s[0]))
                    quote = shown[best[0]:best[1]]
                    if position % 2 == 0:
                        quote = " ".join(casefold_without_accents(quote).split())
                    self.quotes += 1
                    verdicts.append({"chunk_id": int(chunk_id),
                                     "verdict": "accept" if position <= 3 else "reject",
                                     "rationale": "Passage retenu pour la question",
                                     "quote": quote})
                text = json.dumps({"thought": "review", "action": "review",
                                   "args": {"verdicts": verdicts}, "memory_update": memory})
            else:
                text = json.dumps({"thought": "done", "action": "finish", "args": {},
                                   "memory_update": memory})
        else:
            text = plausible_reply(prompt)
        return ChatResult(text=text, model=self.model)


@dataclass
class Tally:
    """Count, over accepted verdicts and over questions, where the answer was found."""

    sources: int = 0
    answer_in_span: int = 0
    key_in_span: int = 0
    key_in_first: int = 0
    key_in_chunk: int = 0
    new_key_in_span: int = 0
    new_key_in_chunk: int = 0
    questions: int = 0
    questions_with_keys: int = 0
    questions_span_hit: int = 0
    questions_chunk_hit: int = 0
    span_chars: list[int] = field(default_factory=list)
    methods: Counter[str] = field(default_factory=Counter)


def measure(rows: list[dict], system: str, progress: bool) -> Tally:
    """Run every question with one policy and tally its accepted verdicts' evidence."""

    retriever = ArchiveRetriever()
    names = [info.name for info in retriever.sub_corpora()]
    tally = Tally()
    for row in tqdm(rows, desc=system, disable=not progress):
        policy = OfflinePolicy() if system == "offline" else LLMPolicy(QuotingChatModel())
        sink = ListSink()
        run_investigation(row["question"], policy=policy, retriever=retriever, sink=sink,
                          config=EngineConfig())
        accepted = [e for e in sink.of("verdict")
                    if isinstance(e, VerdictGiven) and e.verdict == "accept"]
        texts = dict(Chunk.objects.filter(pk__in=[e.chunk_id for e in accepted])
                     .values_list("id", "text"))
        keys = key_entities(row["answer"], names)
        new_keys = [key for key in keys if not holds(row["question"], [key])]
        tally.questions += 1
        tally.questions_with_keys += bool(keys)
        span_hit = chunk_hit = False
        for event in accepted:
            span = event.evidence.text if event.evidence else ""
            chunk = texts.get(event.chunk_id, "")
            tally.sources += 1
            tally.span_chars.append(len(span))
            tally.methods[event.evidence.method if event.evidence else "none"] += 1
            tally.answer_in_span += holds(span, [row["answer"]])
            found = holds(span, keys)
            tally.key_in_span += found
            tally.key_in_first += holds(chunk[:FIRST_CHARS], keys)
            in_chunk = holds(chunk, keys)
            tally.key_in_chunk += in_chunk
            tally.new_key_in_span += holds(span, new_keys)
            tally.new_key_in_chunk += holds(chunk, new_keys)
            span_hit |= found
            chunk_hit |= in_chunk
        tally.questions_span_hit += span_hit
        tally.questions_chunk_hit += chunk_hit
    return tally


def _share(part: int, whole: int) -> str:
    return f"{part / whole:.3f} ({part}/{whole})" if whole else "n/a"


def report(tallies: dict[str, Tally], questions: Path, seconds: float) -> str:
    """Write the Markdown table."""
    lines = [
        "# Evidence spans: how often they hold the answer",
        "",
        f"{next(iter(tallies.values())).questions} questions of `{questions.relative_to(ROOT)}`, "
        f"measured by `measurement/scripts/measure_evidence.py` in {seconds:.0f} s, "
        "counted over every accepted verdict.",
        "",
        "- `offline`: the rule-based policy; its evidence is the one to three sentences of the "
        "chunk richest in the question's words and names.",
        "- `scripted`: the LLM policy driven by a scripted chat model, no model involved. It "
        "plans one sub-question over the whole archive, accepts the first three chunks of the "
        "warm start and rejects the rest, then finishes. Its quote is the sentence of the chunk "
        "as the prompt shows it that shares most words with the question, copied as shown for "
        "odd batch positions and retyped without accents, case or line breaks for even ones; "
        "the engine locates it in the chunk.",
        "",
        "\"Key entity\": a quoted phrase, person, other proper name or number of the `answer` "
        "field; matching ignores case, accents, blanks and punctuation. The whole chunk is the "
        "ceiling (a span cannot hold what its chunk lacks); the chunk's first 400 characters are "
        "what exports quoted before evidence spans.",
        "",
        "| figure | " + " | ".join(tallies) + " |",
        "|---|" + "---|" * len(tallies),
    ]
    figures = [
        ("accepted verdicts", lambda t: str(t.sources)),
        ("whole answer string in the span", lambda t: _share(t.answer_in_span, t.sources)),
        ("a key entity in the span", lambda t: _share(t.key_in_span, t.sources)),
        ("a key entity in the chunk's first 400 characters",
         lambda t: _share(t.key_in_first, t.sources)),
        ("a key entity anywhere in the chunk (ceiling)",
         lambda t: _share(t.key_in_chunk, t.sources)),
        ("span holds a key entity, when its chunk does",
         lambda t: _share(t.key_in_span, t.key_in_chunk)),
        ("a key entity the question does not name, in the span",
         lambda t: _share(t.new_key_in_span, t.sources)),
        ("... in the chunk (ceiling)", lambda t: _share(t.new_key_in_chunk, t.sources)),
        ("questions with a key entity in some span",
         lambda t: _share(t.questions_span_hit, t.questions)),
        ("questions with a key entity in some accepted chunk",
         lambda t: _share(t.questions_chunk_hit, t.questions)),
        ("median span length (characters)",
         lambda t: f"{median(t.span_chars):g}" if t.span_chars else "n/a"),
        ("spans located: exact / fuzzy / best sentences",
         lambda t: " / ".join(str(t.methods[m]) for m in ("exact", "fuzzy", "sentences"))),
    ]
    for label, value in figures:
        lines.append(f"| {label} | " + " | ".join(value(t) for t in tallies.values()) + " |")
    return "\n".join(lines) + "\n"


def main() -> None:
    """Parse arguments, measure, print and write the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=Path, default=DEFAULT_QUESTIONS)
    parser.add_argument("--limit", type=int, default=None, help="first N questions only")
    parser.add_argument("--system", action="append", choices=["offline", "scripted"])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "evidence-measurement.md")
    parser.add_argument("--no-progress", action="store_true")
    args = parser.parse_args()

    with args.questions.open(encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle if line.strip()][: args.limit]
    started = time.perf_counter()
    tallies = {system: measure(rows, system, not args.no_progress)
               for system in args.system or ["offline", "scripted"]}
    text = report(tallies, args.questions.resolve(), time.perf_counter() - started)
    args.out.write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
