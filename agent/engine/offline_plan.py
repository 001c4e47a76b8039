"""Map question wording to sub-corpora for the rule-based offline policy."""

from __future__ import annotations

import re

from agent.engine.text import (
    FRAMING_WORDS,
    LEADING_ARTICLE,
    content_terms,
    extract_date,
    extract_entities,
    inflection_base,
    strip_mentions,
)
from agent.engine.types import SubQuestionSpec
from agent.engine.wording import language_of
from common.search import SubCorpusInfo
from common.text import casefold_without_accents

DEBATE_WORDS = (
    "la chambre", "chambre des deputes", "deputes", "depute", "debat", "debats", "seance",
    "journal officiel", "parlement", "parlementaire", "parlementaires", "tribune", "assemblee",
)  # fmt: skip
PRESS_WORDS = ("la presse", "presse", "journaux", "journal", "quotidien", "quotidiens", "gazette")
# Words that name a kind of source, not what a source says: they never tell two debates (or
# two articles) apart, so they are no evidence that a passage answers the question.
KIND_WORDS = frozenset(word for phrase in DEBATE_WORDS + PRESS_WORDS for word in phrase.split()
                       if len(word) > 2)
# Comparisons between newspapers stay inside the press.
PRESS_ONLY = ("deux journaux", "quel journal", "quels journaux", "lequel des journaux",
              "des deux journaux")
# "lequel ..., et lequel ..." contrasts two sources of one kind: the debates are a single
# record, so the contrast is between newspapers, whatever the topic's words.
_CONTRAST = re.compile(r"\b(?:lequel|laquelle)\b")
_CLAUSE = re.compile(
    r",?\s+et\s+(?=(?:quel|quelle|quels|quelles|comment|pourquoi|lequel|laquelle|qui|que"
    r"|en quoi)\b)",
    re.IGNORECASE,
)


def is_debate(info: SubCorpusInfo) -> bool:
    """Tell whether a sub-corpus holds parliamentary debates."""
    text = casefold_without_accents(f"{info.genre} {info.name} {info.description} {info.slug}")
    return any(word in text for word in ("debat", "parlement", "chambre", "seance", "officiel"))


def is_press(info: SubCorpusInfo) -> bool:
    """Tell whether a sub-corpus is a newspaper."""
    if is_debate(info):
        return False
    text = casefold_without_accents(f"{info.genre} {info.name} {info.description}")
    return any(word in text for word in ("press", "journal", "newspaper", "quotidien", "gazette"))


def name_aliases(info: SubCorpusInfo) -> list[str]:
    """Return folded names a question may use for this sub-corpus."""
    name = casefold_without_accents(info.name).strip()
    aliases = {name, LEADING_ARTICLE.sub("", name), casefold_without_accents(info.slug),
               casefold_without_accents(info.slug.split("_")[0])}
    return sorted((a for a in aliases if len(a) >= 4), key=len, reverse=True)


def _find(folded: str, phrase: str) -> int:
    match = re.search(r"(?<![\w])" + re.escape(phrase) + r"(?![\w])", folded)
    return match.start() if match else -1


def mentioned_targets(question: str, infos: list[SubCorpusInfo]) -> list[str]:
    """Return the sub-corpora a question points to, in order of mention; empty if none."""
    folded = casefold_without_accents(question).replace("’", "'")
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


def _names_a_kind(entity: str) -> bool:
    """Tell whether a capitalised phrase names a kind of source ("Chambre des députés")."""
    folded = casefold_without_accents(entity).replace("’", "'")
    return any(_find(folded, phrase) >= 0 for phrase in DEBATE_WORDS + PRESS_WORDS) or all(
        word in KIND_WORDS for word in re.findall(r"\w+", folded) if len(word) > 2)


def clauses(question: str) -> list[str]:
    """Split a question at coordinated interrogative clauses."""
    parts = [p.strip(" ,;?") for p in _CLAUSE.split(question)]
    return [p for p in parts if p]


_SIDE_MARK = " — "
_ORDINALS = ("1er", "2e", "3e", "4e", "5e", "6e")


def search_text(sub_question_text: str) -> str:
    """Return a sub-question's text without the side it covers (not words of the documents)."""
    return sub_question_text.split(_SIDE_MARK)[0]


_FRAMING_BASES = frozenset(inflection_base(word) for word in FRAMING_WORDS)


def _has_content(text: str, infos: list[SubCorpusInfo]) -> bool:
    """Tell whether a clause names anything to search for beyond its framing words."""
    return any(inflection_base(term) not in _FRAMING_BASES
               for term in content_terms(strip_mentions(text, infos)))


def _points_to(clause: str, info: SubCorpusInfo) -> bool:
    """Tell whether a clause itself names this sub-corpus or its kind (debates, press)."""
    folded = casefold_without_accents(clause).replace("’", "'")
    words = DEBATE_WORDS if is_debate(info) else PRESS_WORDS if is_press(info) else ()
    return any(_find(folded, phrase) >= 0 for phrase in (*name_aliases(info), *words))


def _side(info: SubCorpusInfo | None, press_rank: int, language: str) -> str:
    """Say which side of the question a sub-question covers, without naming its sub-corpus."""
    english = language == "en"
    if info is not None and is_debate(info):
        return _SIDE_MARK + ("in the debates" if english else "à la Chambre (débats)")
    if english:
        return f"{_SIDE_MARK}in the press (title {press_rank})"
    return f"{_SIDE_MARK}dans la presse ({_ORDINALS[min(press_rank, len(_ORDINALS)) - 1]} titre)"


def offline_plan(question: str, infos: list[SubCorpusInfo], m_max: int,
                 scope_sub_corpus: str | None) -> list[SubQuestionSpec]:
    """Fan the question out per mentioned sub-corpus (all of them when none is named).

    Each sub-question asks what its sub-corpus can answer: the clause that points to it (the
    debate side, the press side), with the question's topic added when that clause has none
    of its own ("comment la presse l'a-t-elle rapportée"). Sub-questions that would still read
    the same (one paper each in a comparison) say which side they cover.
    """
    targets = mentioned_targets(question, infos) or [info.slug for info in infos]
    if scope_sub_corpus:
        targets = [scope_sub_corpus]
    by_slug = {info.slug: info for info in infos}
    parts = clauses(question)
    names = {alias for info in infos for alias in name_aliases(info)}
    entities = tuple(e for e in extract_entities(question)
                     if LEADING_ARTICLE.sub("", casefold_without_accents(e).replace("’", "'"))
                     not in names and not _names_a_kind(e))
    target_date = extract_date(question)
    texts = []
    for slug in targets[:m_max]:
        info = by_slug.get(slug)
        own = [p for p in parts if info and _points_to(p, info)] if len(parts) > 1 else []
        own = own or [p for p in parts if not any(_points_to(p, i) for i in infos)] or parts
        text = " ; ".join(own) or question
        if not _has_content(text, infos):
            # The whole clause, not just its topic phrase: the warm start searches this text.
            topics = [p for p in parts if p not in own and _has_content(p, infos)]
            if topics:
                text = f"{text} ({' ; '.join(topics)})"
        texts.append(strip_mentions(text, infos) or question)
    language = language_of(question)
    plan, press_rank = [], 0
    for slug, text in zip(targets[:m_max], texts, strict=True):
        info = by_slug.get(slug)
        press_rank += 1 if info is not None and not is_debate(info) else 0
        if texts.count(text) > 1:
            text += _side(info, press_rank, language)
        plan.append(SubQuestionSpec(text=text, target_sub_corpus=slug, entities=entities,
                                target_date=target_date))
    return plan
