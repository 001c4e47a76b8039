"""One check for every plan, offline or from a model, and the repair of what it finds.

A sub-question starts with a capital, ends with « ? », holds no placeholder, differs from the
others; the plan as a whole keeps the question's content words.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from agent.engine.question_parse import parsed
from agent.engine.sources import is_debate
from agent.engine.text import content_terms, inflection_base, tokens
from agent.engine.wording import ENGLISH, language_of
from common.search import SubCorpusInfo
from common.text import casefold_without_accents

# Marks a template or a model leaves when it did not fill something in.
_PLACEHOLDER = re.compile(
    r"\(\s*\d+\s*(?:er|e|re|ème)?\s+titre\s*\)|\btitle \d+\b|[\[\]{}<>]|\.\.\.|…|\bX{2,}\b|"
    r"\bTODO\b|\b(?:sub-?question|sous-question)\s*\d|_{2,}",
    re.IGNORECASE,
)
KEPT_SHARE = 0.9


@dataclass(frozen=True)
class PlanFinding:
    """What the check found wrong with one sub-question (index) or the plan (index None)."""

    index: int | None
    problem: str


def _starts_with_capital(text: str) -> bool:
    first = next((c for c in text if c.isalnum()), "")
    return bool(first) and (first.isupper() or first.isdigit())


def sub_question_key(text: str) -> tuple[str, ...]:
    """What two sub-questions must not share: the same words in the same order."""
    return tuple(tokens(text)) or (text.casefold(),)


def _word_root(term: str) -> str:
    """A word's first letters once its plural and feminine endings are cut: a verb's tenses
    and persons share them ("jugeaient", "jugeait")."""
    return inflection_base(term)[:5]


def kept_share(question: str, texts: Sequence[str]) -> float:
    """Share of the question's content words found (any inflection) in some sub-question."""
    wanted = {_word_root(term): term for term in content_terms(question)}
    if not wanted:
        return 1.0
    found = {_word_root(term) for text in texts
             for term in content_terms(text, drop_framing=False)}
    missing = [term for root, term in wanted.items() if root not in found]
    if missing:
        # An irregular verb changes its root with its person ("disent", "dit"): compare lemmas.
        kept = {casefold_without_accents(lemma) for text in texts
                for lemma in parsed(text).content_lemmas()}
        asked = {casefold_without_accents(w.text): casefold_without_accents(w.lemma)
                 for w in parsed(question).words}
        missing = [term for term in missing if asked.get(term, term) not in kept]
    return 1 - len(missing) / len(wanted)


def check_plan(question: str, texts: Sequence[str]) -> list[PlanFinding]:
    """Return every finding of the check; an empty list is a well-formed plan."""
    findings: list[PlanFinding] = []
    seen: set[tuple[str, ...]] = set()
    for index, text in enumerate(texts):
        if not _starts_with_capital(text):
            findings.append(PlanFinding(index, "does not start with a capital"))
        if not text.rstrip().endswith("?"):
            findings.append(PlanFinding(index, "does not end with « ? »"))
        if _PLACEHOLDER.search(text):
            findings.append(PlanFinding(index, "holds a placeholder"))
        key = sub_question_key(text)
        if key in seen:
            findings.append(PlanFinding(index, "repeats another sub-question"))
        seen.add(key)
    if texts and kept_share(question, texts) < KEPT_SHARE:
        findings.append(PlanFinding(None, "drops content words of the question"))
    return findings


def well_formed(text: str) -> str:
    """Repair the form of one sub-question: spaces, a capital first, « ? » last."""
    text = " ".join(_PLACEHOLDER.sub(" ", text).split())
    text = re.sub(r"\s+([,;.])", r"\1", text).strip(" ,;:.")
    text = re.sub(r"\s*\?+$", "", text).rstrip(" ,;:.")
    if not text:
        return ""
    index = next((i for i, c in enumerate(text) if c.isalnum()), 0)
    text = text[:index] + text[index].upper() + text[index + 1:]
    return f"{text} ?"


def lowered_start(text: str) -> str:
    """Lower the first letter unless the text opens on a name ("M. Ribot", "Le Gaulois")."""
    first = text.split(" ", 1)[0]
    if first in ("M.", "MM.", "Mme", "Mgr") or first[:1].isdigit():
        return text
    if len(text) > 1 and (text[1].isupper() or first.lower() in ("l'", "l’")):
        return text
    return text[:1].lower() + text[1:]


def according_to(info: SubCorpusInfo, text: str) -> str:
    """Say whose account a sub-question asks for, by its sub-corpus ("D'après Le Gaulois, …")."""
    if language_of(text) == ENGLISH:
        source = f"According to {info.name}"
    elif is_debate(info):
        source = "D'après les débats de la Chambre"
    else:
        source = f"D'après {info.name}"
    return well_formed(f"{source}, {lowered_start(text)}")
