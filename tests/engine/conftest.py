"""Share a tiny archive and reply builders for the engine tests."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agent.engine.prompting import Prompt
from agent.engine.sinks import ListSink
from common.search import Hit, SubCorpusInfo
from tests.fakes.chat import ScriptedChatModel
from tests.fakes.retriever import InMemoryRetriever, chunk

INFOS = [
    SubCorpusInfo("gaulois", "Le Gaulois", "press"),
    SubCorpusInfo("intran", "L'Intransigeant", "press"),
    SubCorpusInfo("debats", "Chambre des députés, débats (Journal officiel)", "debates"),
]

DOCS = [
    # chunk_id, document_key, sub_corpus, date, text
    (1, "gaulois:1", "gaulois", "1887-02-26", "M. Lejeune défend le droit sur les céréales."),
    (2, "gaulois:1", "gaulois", "1887-02-26", "Suite: la protection de l'agriculture."),
    (3, "gaulois:2", "gaulois", "1887-03-01", "Les sucres et le budget de la guerre."),
    (4, "intran:1", "intran", "1887-02-27", "M. Lejeune, bloc enfariné, droit sur les céréales."),
    (5, "intran:1", "intran", "1887-02-27", "La disette et la spéculation sur le pain."),
    (6, "intran:2", "intran", "1887-02-28", "Le pain cher et les céréales étrangères."),
    (7, "debats:1", "debats", "1887-02-25", "Séance: M. Lejeune parle des céréales et du droit."),
    (8, "debats:1", "debats", "1887-02-25", "M. Pelletan répond sur l'agriculture."),
    (9, "debats:2", "debats", "1887-05-10", "Discussion de la loi sur les sucres."),
    (10, "gaulois:3", "gaulois", "1887-02-24", "Les céréales au marché, veille du débat."),
]

Q = "Comment M. Lejeune défend-il le droit sur les céréales, et comment la presse réagit-elle ?"


def make_chunks() -> list[Hit]:
    ids = {key: number for number, key in enumerate(dict.fromkeys(d[1] for d in DOCS), start=1)}
    return [chunk(cid, ids[key], key, sc, day, text) for cid, key, sc, day, text in DOCS]


@pytest.fixture
def retriever() -> InMemoryRetriever:
    return InMemoryRetriever(make_chunks(), INFOS)


@pytest.fixture
def sink() -> ListSink:
    return ListSink()


def memory(tag: str = "") -> dict[str, str]:
    return {"prior_findings": f"pf{tag}", "question_analysis": f"qa{tag}",
            "evidence_gathered": f"eg{tag}", "gaps_remaining": f"gr{tag}", "next_steps": f"ns{tag}"}


def plan(*items: tuple[str, str | None]) -> str:
    return json.dumps({"sub_questions": [
        {"text": text, "target_sub_corpus": target, "entities": ["M. Lejeune"],
         "target_date": None} for text, target in items]})


def search(channel: str = "bm25", query: str = "céréales", tag: str = "", **extra: Any) -> str:
    args = {"channel": channel, "query": query, **extra}
    return json.dumps({"thought": "search", "action": "search", "args": args,
                       "memory_update": memory(tag)})


def review(*verdicts: tuple[int, str] | tuple[int, str, str], tag: str = "") -> str:
    items = [{"chunk_id": v[0], "verdict": v[1], "rationale": v[2] if len(v) > 2 else "why"}
             for v in verdicts]
    return json.dumps({"thought": "review", "action": "review", "args": {"verdicts": items},
                       "memory_update": memory(tag)})


def finish(tag: str = "") -> str:
    return json.dumps({"thought": "done", "action": "finish", "args": {},
                       "memory_update": memory(tag)})


def held(*promote: int) -> str:
    return json.dumps({"promotions": [{"chunk_id": c, "rationale": "now supported"}
                                      for c in promote], "rationale": "r"})


def briefing(summary: str = "brief") -> str:
    return json.dumps({"summary": summary, "confirmed_facts": ["f"], "confirmed_dates": [],
                       "confirmed_entities": ["M. Lejeune"], "gaps": [], "search_hints": ["pain"]})


def keep_plan() -> str:
    return json.dumps({"remaining": None, "rationale": "keep"})


def scripted(*replies: Any) -> ScriptedChatModel:
    return ScriptedChatModel(list(replies))


def pending_ids(user: str) -> list[int]:
    import re

    return [int(x) for x in re.findall(r'<document chunk_id="(\d+)"', user)]


def review_pending(verdict: str = "accept", *, first_only: str | None = None, tag: str = ""):
    """Review whatever is pending with `verdict` (or only the first; the rest `first_only`)."""

    def reply(prompt: Prompt) -> str:
        ids = pending_ids(prompt.user)
        items = []
        for i, cid in enumerate(ids):
            v = verdict if (first_only is None or i == 0) else first_only
            items.append((cid, v, f"chunk {cid} judged {v}"))
        return review(*items, tag=tag)

    return reply


def run(question: str, replies: list[Any], retriever: InMemoryRetriever, sink: ListSink,
        **kwargs: Any):
    from agent.engine import LLMPolicy, run_investigation

    chat = scripted(*replies)
    result = run_investigation(question, policy=LLMPolicy(chat), retriever=retriever, sink=sink,
                               **kwargs)
    return result, chat


def rank_all(prompt: Prompt) -> str:
    import re

    return json.dumps({"order": re.findall(r'<rationale document="([^"]*)"', prompt.user)})
