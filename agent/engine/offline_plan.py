"""Map question wording to sub-corpora for the rule-based offline policy."""

from __future__ import annotations

import re

from agent.engine.text import extract_date, extract_entities, fold
from agent.engine.types import SubQuestionSpec
from common.search import SubCorpusInfo

DEBATE_WORDS = (
    "la chambre", "chambre des deputes", "deputes", "depute", "debat", "debats", "seance",
    "journal officiel", "parlement", "parlementaire", "parlementaires", "tribune", "assemblee",
)  # fmt: skip
PRESS_WORDS = ("la presse", "presse", "journaux", "journal", "quotidien", "quotidiens", "gazette")
# Comparisons between newspapers stay inside the press.
PRESS_ONLY = ("deux journaux", "quel journal", "quels journaux", "lequel des journaux",
              "des deux journaux")
# "lequel ..., et lequel ..." contrasts two sources of one kind: the debates are a single
# record, so the contrast is between newspapers, whatever the topic's words.
_CONTRAST = re.compile(r"\b(?:lequel|laquelle)\b")
_ARTICLES = re.compile(r"^(le |la |les |l'|l’)")
_CLAUSE = re.compile(
    r",?\s+et\s+(?=(?:quel|quelle|quels|quelles|comment|pourquoi|lequel|laquelle|qui|que"
    r"|en quoi)\b)",
    re.IGNORECASE,
)


def is_debate(info: SubCorpusInfo) -> bool:
    """Tell whether a sub-corpus holds parliamentary debates."""
    text = fold(f"{info.genre} {info.name} {info.description} {info.slug}")
    return any(word in text for word in ("debat", "parlement", "chambre", "seance", "officiel"))


def is_press(info: SubCorpusInfo) -> bool:
    """Tell whether a sub-corpus is a newspaper."""
    if is_debate(info):
        return False
    text = fold(f"{info.genre} {info.name} {info.description}")
    return any(word in text for word in ("press", "journal", "newspaper", "quotidien", "gazette"))


def name_aliases(info: SubCorpusInfo) -> list[str]:
    """Return folded names a question may use for this sub-corpus."""
    name = fold(info.name).strip()
    aliases = {name, _ARTICLES.sub("", name), fold(info.slug), fold(info.slug.split("_")[0])}
    return sorted((a for a in aliases if len(a) >= 4), key=len, reverse=True)


def _find(folded: str, phrase: str) -> int:
    match = re.search(r"(?<![\w])" + re.escape(phrase) + r"(?![\w])", folded)
    return match.start() if match else -1


def mentioned_targets(question: str, infos: list[SubCorpusInfo]) -> list[str]:
    """Return the sub-corpora a question points to, in order of mention; empty if none."""
    folded = fold(question).replace("’", "'")
    found: dict[str, int] = {}
    named_press = False
    for info in infos:
        positions = [p for p in (_find(folded, a) for a in name_aliases(info)) if p >= 0]
        if positions:
            found[info.slug] = min(positions)
            named_press = named_press or is_press(info)
    debate_pos = [p for p in (_find(folded, w) for w in DEBATE_WORDS) if p >= 0]
    press_pos = [p for p in (_find(folded, w) for w in PRESS_WORDS) if p >= 0]
    press_only = any(_find(folded, w) >= 0 for w in PRESS_ONLY) or len(
        _CONTRAST.findall(folded)) >= 2
    if press_only:
        # Comparing sources of one kind: drop the debates, name every paper if none is named.
        for info in infos:
            if is_debate(info):
                found.pop(info.slug, None)
            elif is_press(info) and not named_press:
                found.setdefault(info.slug, min(press_pos or [len(folded)]))
        return sorted(found, key=lambda slug: (found[slug], slug))
    if press_pos and not named_press:
        for info in infos:
            if is_press(info):
                found.setdefault(info.slug, min(press_pos))
        # What the press said about an event implies the record of the event itself.
        if not debate_pos:
            debate_pos = [len(folded)]
    if debate_pos and not (named_press and not press_pos):
        for info in infos:
            if is_debate(info):
                found.setdefault(info.slug, min(debate_pos))
    return sorted(found, key=lambda slug: (found[slug], slug))


def clauses(question: str) -> list[str]:
    """Split a question at coordinated interrogative clauses."""
    parts = [p.strip(" ,;?") for p in _CLAUSE.split(question)]
    return [p for p in parts if p]


def strip_mentions(text: str, infos: list[SubCorpusInfo]) -> str:
    """Drop sub-corpus names from a query: they never occur in the documents themselves."""
    result = text
    for info in infos:
        for alias in (info.name, _ARTICLES.sub("", info.name.lower())):
            if len(alias) >= 4:
                result = re.sub(re.escape(alias), " ", result, flags=re.IGNORECASE)
    result = re.sub(r"\bentre\s+et\s*,?", " ", result, flags=re.IGNORECASE)
    return " ".join(result.split())


def offline_plan(question: str, infos: list[SubCorpusInfo], m_max: int,
                 scope_sub_corpus: str | None) -> list[SubQuestionSpec]:
    """Fan the question out per mentioned sub-corpus (all of them when none is named)."""
    targets = mentioned_targets(question, infos) or [info.slug for info in infos]
    if scope_sub_corpus:
        targets = [scope_sub_corpus]
    by_slug = {info.slug: info for info in infos}
    parts = clauses(question)
    names = {alias for info in infos for alias in name_aliases(info)}
    entities = tuple(e for e in extract_entities(question)
                     if _ARTICLES.sub("", fold(e).replace("’", "'")) not in names)
    target_date = extract_date(question)
    plan = []
    for slug in targets[:m_max]:
        info = by_slug.get(slug)
        focus = [p for p in parts if info and mentioned_targets(p, [info])]
        ordered = focus + [p for p in parts if p not in focus] if len(parts) > 1 else parts
        text = strip_mentions(" ; ".join(ordered) or question, infos) or question
        plan.append(SubQuestionSpec(text=text, target_sub_corpus=slug, entities=entities,
                                target_date=target_date))
    return plan
