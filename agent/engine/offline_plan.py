"""Plan the offline policy's sub-questions: the sources a question points to, each asked in turn."""

from __future__ import annotations

import re

from agent.engine.french_rewrite import (
    ANAPHOR,
    KIND_PATTERNS,
    aliases_pattern,
    antecedent,
    contracted,
    contrast_for,
    named_as,
    one_of_a_pair,
    owner_named,
    press_in_general,
    restored,
)
from agent.engine.plan_check import according_to, lowered_start, well_formed
from agent.engine.question_parse import parsed
from agent.engine.sources import is_debate, is_press
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


def _points_to(clause: str, info: SubCorpusInfo) -> bool:
    """Tell whether a clause itself names this sub-corpus or its kind (debates, press)."""
    folded = casefold_without_accents(clause).replace("’", "'")
    words = DEBATE_WORDS if is_debate(info) else PRESS_WORDS if is_press(info) else ()
    return any(_find(folded, phrase) >= 0 for phrase in (*name_aliases(info), *words))


# -- the plan --------------------------------------------------------------------------------

def question_names(question: str, infos: list[SubCorpusInfo]) -> tuple[str, ...]:
    """People, places and organisations the question names, as written; sources left out.

    The rules keep honorific forms whole ("M. Cuneo d'Ornano"); the parser adds the names they
    miss. A sub-corpus's own name, or a kind of source ("la Chambre"), is not a name to search.
    """
    sources = {alias for info in infos for alias in name_aliases(info)}

    def is_source(entity: str) -> bool:
        folded = LEADING_ARTICLE.sub("", casefold_without_accents(entity).replace("’", "'"))
        return folded in sources or _names_a_kind(entity)

    found = [e for e in extract_entities(question) if not is_source(e)]
    for name in parsed(question).names:
        text = name.text.strip(" ,;:?!«»\"")
        if (name.label in ("PER", "LOC", "ORG") and len(text) >= 3 and not is_source(text)
                and not any(text in e or e in text for e in found)):
            found.append(text)
    return tuple(dict.fromkeys(found))


def _text_for(question: str, parts: list[str], info: SubCorpusInfo | None,
              infos: list[SubCorpusInfo], papers: list[re.Pattern[str]]) -> str:
    """The sub-question one source answers, every part of the question it needs restored."""
    if info is None:
        return question
    press = is_press(info)
    if press:
        rewritten = contrast_for(question, info.name, papers)
        if rewritten is not None:
            return rewritten
    rewritten = one_of_a_pair(question, named_as(info), [*papers, *KIND_PATTERNS])
    if rewritten is not None:
        return rewritten
    text = _clauses_for(question, parts, info, infos)
    if press and not any(p.search(question) for p in papers):
        text = press_in_general(text, info.name)
    return text


_FRAMING_BASES = frozenset(inflection_base(word) for word in FRAMING_WORDS)


def _has_content(clauses: list[str], infos: list[SubCorpusInfo]) -> bool:
    """Tell whether clauses name anything to search for beyond their framing words."""
    return any(inflection_base(term) not in _FRAMING_BASES and term not in KIND_WORDS
               for clause in clauses
               for term in content_terms(strip_mentions(clause, infos)))


def _clauses_for(question: str, parts: list[str], info: SubCorpusInfo,
                 infos: list[SubCorpusInfo]) -> str:
    """The clauses one source answers, joined, with what their pronouns stand for restored.

    The Chamber's side is every clause that does not point to the press; a paper's side is the
    clauses that point to it or to the press, and the clauses that follow them. A clause whose
    pronoun stands for nothing it can name keeps the whole question.
    """
    if len(parts) < 2:
        return question
    press_side = [any(_points_to(p, i) for i in infos if is_press(i)) for p in parts]
    if is_press(info):
        first = next((i for i, p in enumerate(parts) if press_side[i] and (
            _points_to(p, info) or not any(_points_to(p, o) for o in infos
                                           if is_press(o) and o.slug != info.slug))), None)
        own = list(range(first, len(parts))) if first is not None else []
    else:
        own = [i for i, side in enumerate(press_side) if not side]
    if not own or len(own) == len(parts):
        return question
    found = antecedent(parts[0]) if own[0] != 0 else None
    person = next((e for e in extract_entities(parts[0]) if e.startswith(("M. ", "Mme "))),
                  None) or next((n.text for n in parsed(parts[0]).names if n.label == "PER"), None)
    pieces = []
    for i in own:
        piece = parts[i] if i == 0 else owner_named(restored(parts[i], found), person)
        if i != 0 and piece == parts[i] and found is None and ANAPHOR.search(piece):
            return question
        pieces.append(piece)
    if not _has_content(pieces, infos):
        return question
    return ", et ".join([pieces[0], *(lowered_start(p) for p in pieces[1:])])


def offline_plan(question: str, infos: list[SubCorpusInfo], m_max: int,
                 scope_sub_corpus: str | None) -> list[SubQuestionSpec]:
    """Plan one self-contained sub-question per source the question points to.

    Sources named in the question, or the kinds it names (the Chamber, the press), pick the
    sub-corpora (all of them when it names none). Each sub-question is the question rewritten
    for its source: a comparison asks each paper in turn ("Le Gaulois ignore-t-il … ou la
    met-il en avant ?"), a clause about the press names the paper and what its pronoun stood
    for ("comment Le Gaulois a-t-il rapporté la mesure au sujet de … ?"). Two that would still
    read the same say whose account they ask for.
    """
    question = " ".join(question.split())
    targets = mentioned_targets(question, infos) or [info.slug for info in infos]
    if scope_sub_corpus:
        targets = [scope_sub_corpus]
    targets = targets[:m_max]
    by_slug = {info.slug: info for info in infos}
    papers = [aliases_pattern(info) for info in infos if is_press(info)]
    parts = clauses(question)
    texts = [well_formed(contracted(_text_for(question, parts, by_slug.get(slug), infos, papers)))
             or well_formed(question) or question for slug in targets]
    repeated = [texts.count(text) > 1 for text in texts]
    for index, text in enumerate(texts):
        info = by_slug.get(targets[index])
        if repeated[index] and info is not None:
            texts[index] = according_to(info, text)
    entities = question_names(question, infos)
    target_date = extract_date(question)
    return [SubQuestionSpec(text=text, target_sub_corpus=slug, entities=entities,
                            target_date=target_date)
            for slug, text in zip(targets, texts, strict=True)]
