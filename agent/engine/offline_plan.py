"""Plan the offline policy's sub-questions: the sources a question points to, each asked in turn."""

from __future__ import annotations

import re

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


# -- the parts of a question the rewriting reads --------------------------------------------

def _word_set(block: str) -> frozenset[str]:
    return frozenset(block.split())


_APOSTROPHE = "['’]"
# A word after which no finite verb follows a "lequel": the contrast leaves its verb out.
_NOT_A_VERB = _word_set(
    "sur de des du d au aux à a en dans pour par avec comme le la les l un une ce "
    "cette ces son sa ses leur leurs plus moins davantage"
)
_CLITICS = r"(?:(?:ne|n['’]|se|s['’]|l['’]|le|la|les|en|y|lui|leur)\s*)*"
_WHICH_SOURCE = re.compile(
    r"\b(?:lequel|laquelle)(?:\s+des\s+(?:deux\s+)?(?:journaux|quotidiens|titres|feuilles))?"
    r"|\bquel(?:le)?\s+(?:journal|quotidien|titre|feuille)\b", re.IGNORECASE)
_AND_WHICH = re.compile(r",?\s+et\s+(?:lequel|laquelle)\b", re.IGNORECASE)
_INVERTED_PLURAL = re.compile(r"\b([^\W\d_]+?)(-t)?-(ils|elles)\b")
_OBJECT_CLITIC = re.compile(
    rf"\b(?:l{_APOSTROPHE}\s*|les\s+|le\s+|la\s+)(?=(?:a|ont|avait|avaient|[^\W\d_]+)"
    r"(?:-t)?-(?:il|elle|ils|elles|on)\b)", re.IGNORECASE)
_AUX_PARTICIPLE = re.compile(
    r"\b((?:a|ont|avait|avaient|aura|auront)(?:-t)?-(?:il|elle|ils|elles|on))\s+"
    r"([^\W\d_]+?(?:é|i|u|t|s))(e?s?)\b", re.IGNORECASE)
_INTERROGATIVE_NOUN = re.compile(r"\b(quel|quelle|quels|quelles)\s+([^\W\d_]+)", re.IGNORECASE)
_DETERMINER = _word_set(
    "le la les l un une des ce cet cette ces son sa ses leur leurs m mm mme"
)
_VERB_START = _word_set(
    "a ont est sont avait avaient fut furent été"
)
_PREPOSITION = _word_set(
    "de d du des sur concernant contre pour au aux à en envers par"
)
_PASSIVE = re.compile(r"\b(?:a été|ont été|avait été|est|sont|fut|furent)\s+([^\W\d_]+)\b",
                      re.IGNORECASE)
_IRREGULAR_SINGULAR = {"sont": "est", "ont": "a", "font": "fait", "vont": "va",
                       "disent": "dit", "prennent": "prend", "peuvent": "peut",
                       "veulent": "veut", "doivent": "doit", "voient": "voit"}


_SINGULAR_ENDINGS = (("aient", "ait"), ("aissent", "aît"), ("issent", "it"), ("ivent", "it"),
                     ("uivent", "uit"), ("uisent", "uit"), ("oient", "oit"), ("ennent", "ent"),
                     ("ettent", "et"), ("ondent", "ond"), ("endent", "end"), ("ordent", "ord"),
                     ("aignent", "aint"), ("eignent", "eint"), ("oignent", "oint"))


def _contracted(text: str) -> str:
    """French contractions around a title put in a sentence: "de Le Gaulois" -> "du Gaulois"."""
    text = re.sub(r"\b([Dd])e Le ", r"\1u ", text)
    return re.sub(r"\b([Àà]) Le ", lambda m: "Au " if m.group(1) == "À" else "au ", text)


def aliases_pattern(info: SubCorpusInfo) -> re.Pattern[str]:
    """Match a sub-corpus name as a question writes it ("Le Gaulois", "le Gaulois", "Gaulois")."""
    bare = LEADING_ARTICLE.sub("", info.name.lower().replace("’", "'"))
    article = info.name[: len(info.name) - len(bare)] if bare != info.name.lower() else ""
    body = re.escape(bare).replace("'", _APOSTROPHE)
    lead = re.escape(article.strip()).replace("'", _APOSTROPHE) if article else ""
    prefix = rf"(?:{lead}\s*)?" if lead else ""
    return re.compile(rf"(?<![\w]){prefix}{body}(?![\w])", re.IGNORECASE)


def _pronoun(name: str) -> str:
    """The subject pronoun standing for a paper: "elle" for a "La …" title, else "il"."""
    return "elle" if name.lower().startswith("la ") else "il"


def _inverted(verb: str, pronoun: str) -> str:
    """Invert a third-person verb with its subject pronoun: "met-il", "présente-t-il"."""
    return f"{verb}-t-{pronoun}" if verb[-1:].lower() in "eac" else f"{verb}-{pronoun}"


def _singular(verb: str) -> str:
    """The third person singular of a third person plural verb: "présentent" -> "présente"."""
    lower = verb.lower()
    if lower in _IRREGULAR_SINGULAR:
        return _IRREGULAR_SINGULAR[lower]
    for plural, singular in _SINGULAR_ENDINGS:
        if lower.endswith(plural):
            return verb[: len(verb) - len(plural)] + singular
    if lower.endswith("ent"):
        return verb[:-2]
    return verb


# -- rewriting one question for one source ---------------------------------------------------

def _drop_between_frame(text: str, papers: list[re.Pattern[str]]) -> str:
    """Drop "entre A et B," when A and B are sources the archive holds."""
    frame = re.search(r"\b(?:entre|parmi)\s+(.+?)\s+et\s+(.+?)\s*,\s*", text, re.IGNORECASE)
    if frame and all(any(p.fullmatch(side.strip()) for p in papers) for side in frame.groups()):
        return text[: frame.start()] + text[frame.end():]
    return text


def _finite_verb_after(text: str, position: int) -> re.Match[str] | None:
    """The clitics and the verb that follow a subject ending at this position, if any."""
    match = re.compile(rf"\s*({_CLITICS})([^\W\d_]+)").match(text, position)
    if match and match.group(2).lower() not in _NOT_A_VERB:
        return match
    return None


def _contrast_for(text: str, name: str, papers: list[re.Pattern[str]]) -> str | None:
    """Rewrite "lequel … et lequel …" for one paper: "Le Gaulois ignore-t-il … ou la met-il … ?"."""
    if not _WHICH_SOURCE.search(text):
        return None
    pronoun = _pronoun(name)
    text = _drop_between_frame(text, papers)
    subject = _WHICH_SOURCE.search(text)
    if subject is None:
        return None
    verb = _finite_verb_after(text, subject.end())
    if verb:
        head = (f"{text[: subject.start()]}{name} {verb.group(1)}"
                f"{_inverted(verb.group(2), pronoun)}")
        rest = text[verb.end():]
    else:
        head, rest = f"{text[: subject.start()]}{name}", text[subject.end():]
    while (other := _AND_WHICH.search(rest)) is not None:
        verb = _finite_verb_after(rest, other.end())
        if verb:
            rest = (f"{rest[: other.start()]} ou {verb.group(1)}"
                    f"{_inverted(verb.group(2), pronoun)}{rest[verb.end():]}")
        else:
            rest = f"{rest[: other.start()]} ou{rest[other.end():]}"
    return head + rest


def _one_of_a_pair(text: str, name: str, papers: list[re.Pattern[str]]) -> str | None:
    """Rewrite "A et B présentent-ils …" for one of them: "B présente-t-il …".

    The source asked about must be one of the pair: its name, or its kind ("la presse").
    """
    spans = sorted((m.start(), m.end()) for p in papers for m in p.finditer(text))
    pairs = [(a[0], b[1]) for a, b in zip(spans, spans[1:], strict=False)
             if re.fullmatch(rf"\s+et\s+(?:de\s+|du\s+|d{_APOSTROPHE})?", text[a[1]:b[0]])]
    pairs += [(m.start(), m.end()) for m in _BOTH_PAPERS.finditer(text)]
    own = _KIND_OF.get(name)
    for a_start, b_end in sorted(pairs):
        before, after = text[:a_start], text[b_end:]
        pair = casefold_without_accents(text[a_start:b_end])
        if own is not None and own not in pair:
            continue
        if re.search(r"\b(?:entre|parmi)\s*$", before, re.IGNORECASE):
            return None
        inverted = _INVERTED_PLURAL.search(after)
        if inverted and inverted.start() < 40:
            verb = _singular(inverted.group(1))
            after = (after[: inverted.start()] + _inverted(verb, _pronoun(name))
                     + after[inverted.end():])
        else:
            verb_before = re.search(r"([^\W\d_]+)\s*$", before)
            if verb_before and verb_before.group(1).lower().endswith("ent"):
                before = before[: verb_before.start()] + _singular(verb_before.group(1)) + " "
        after = re.sub(r"\bleurs\b", "ses", _LEUR.sub(
            lambda m: ("sa " if _feminine(m.group(1), text) else "son ") + m.group(1), after))
        return before + name + after
    return None


_BOTH_PAPERS = re.compile(r"\bles deux (?:journaux|quotidiens|titres|feuilles)\b", re.IGNORECASE)
_KIND_PATTERNS = [re.compile(r"(?<![\w])(?:la Chambre(?: des députés)?|la presse|les journaux)"
                             r"(?![\w])", re.IGNORECASE)]


_ANAPHOR = re.compile(r"\b(?:ce|cet|cette|ces|lui|leur|en|l['’]|le|la|les)\s*(?:[^\W\d_]+-|"
                     r"débats?|sujet|point|question|discussion|intervention|proposition)",
                     re.IGNORECASE)
_ABOUT = re.compile(r"\b(?:concernant|au sujet d|à propos d|sur|contre)\b", re.IGNORECASE)


# The kind of source a sub-question names by kind must be in the pair it replaces.
_KIND_OF = {"la Chambre": "chambre"}


def _named_as(info: SubCorpusInfo) -> str:
    """How a sub-question names its source: the paper's title, or the Chamber."""
    return "la Chambre" if is_debate(info) else info.name


_LEUR = re.compile(r"\bleur\s+([^\W\d_]+)")


def _feminine(noun: str, question: str) -> bool:
    """Tell from the parse of the question whether a noun it holds is feminine."""
    for word in parsed(question).words:
        if word.text == noun:
            return word.gender == "Fem"
    return False


def _antecedent(clause: str) -> str | None:
    """What an object pronoun of a later clause stands for: "la mesure au sujet de …"."""
    asked = _INTERROGATIVE_NOUN.search(clause)
    if asked is None or asked.group(2).lower() in ("est", "sont", "a", "ont"):
        return None
    words = clause[asked.end():].split()
    modifiers: list[str] = []
    position = 0
    while position < len(words):
        word = words[position]
        folded = casefold_without_accents(word).strip(",").split("'")[0].split("’")[0]
        if folded in _PREPOSITION and folded == word.lower() and position + 1 < len(words):
            modifiers += words[position: position + 2]
            position += 2
            continue
        if folded in _VERB_START or "-" in word or folded in _DETERMINER or word[:1].isupper():
            break
        modifiers.append(word)
        position += 1
    noun = asked.group(2)
    plural = asked.group(1).lower().endswith("s")
    feminine = asked.group(1).lower().startswith("quelle")
    article = "les " if plural else "l'" if noun[:1].lower() in "aeéèêiîoôuh" else (
        "la " if feminine else "le ")
    phrase = " ".join([article + noun, *modifiers]).replace("' ", "'")
    passive = _PASSIVE.search(clause, asked.end())
    if passive:
        phrase = f"{phrase} {passive.group(1)}"
    participle = passive or _AUX_PARTICIPLE.search(clause) or re.search(
        r"-(?:il|elle|ils|elles|on)\s+[^\W\d_]+", clause)
    tail = clause[participle.end():].strip(" ,") if participle else ""
    tail_first = casefold_without_accents(tail.split(" ", 1)[0]) if tail else ""
    if tail_first in _PREPOSITION or tail.lower().startswith(("au sujet", "à propos", "lors")):
        phrase = f"{phrase} {tail}"
    elif (about := _ABOUT.search(tail)) is not None:
        phrase = f"{phrase} {tail[about.start():]}"
    return phrase


_DEMONSTRATIVE = re.compile(r"(?<=-il )(?:ce|cet|cette|ces)\s+[^\W\d_]+|"
                            r"(?<=-on )(?:ce|cet|cette|ces)\s+[^\W\d_]+|"
                            r"(?<=-ils )(?:ce|cet|cette|ces)\s+[^\W\d_]+|"
                            r"(?<=-elle )(?:ce|cet|cette|ces)\s+[^\W\d_]+|"
                            r"(?<=-elles )(?:ce|cet|cette|ces)\s+[^\W\d_]+", re.IGNORECASE)
_EN_CLITIC = re.compile(r"\ben\s+([^\W\d_]+(?:-t)?-(?:il|elle|ils|elles|on))(\s+compte)?\b",
                        re.IGNORECASE)


def _of(phrase: str) -> str:
    """Join "de" to a noun phrase: "du projet", "de la mesure", "des princes", "de l'amendement"."""
    if phrase.startswith("le "):
        return "du " + phrase[3:]
    if phrase.startswith("les "):
        return "des " + phrase[4:]
    return "de " + phrase


def _restored(clause: str, antecedent: str | None) -> str:
    """Put back what a pronoun stands for: "l'a-t-elle rapportée" -> "a-t-elle rapporté …"."""
    if antecedent is None:
        return clause
    if (en := _EN_CLITIC.search(clause)) is not None:
        return (f"{clause[: en.start()]}{en.group(1)}{en.group(2) or ''} {_of(antecedent)}"
                f"{clause[en.end():]}")
    clitic = _OBJECT_CLITIC.search(clause)
    if clitic is None:
        this = _DEMONSTRATIVE.search(clause)
        if this is not None:
            # In apposition: the clause keeps its own word, the reader learns what it names.
            rest = clause[this.end():]
            return f"{clause[: this.end()]}, {antecedent}{',' if rest.strip() else ''}{rest}"
        return clause
    clause = clause[: clitic.start()] + clause[clitic.end():]
    aux = _AUX_PARTICIPLE.search(clause, clitic.start())
    if aux:
        return f"{clause[: aux.start()]}{aux.group(1)} {aux.group(2)} {antecedent}" + \
            clause[aux.end():]
    verb = re.compile(r"[^\W\d_]+(?:-t)?-(?:il|elle|ils|elles|on)\b").search(clause, clitic.start())
    if verb is None:
        return clause
    return f"{clause[: verb.end()]} {antecedent}{clause[verb.end():]}"


def _press_in_general(clause: str, name: str) -> str:
    """Name the paper where a clause says "la presse": "comment Le Gaulois a-t-il …"."""
    folded = casefold_without_accents(clause)
    found = re.search(r"\b(la presse|les journaux)\b", folded)
    if found is None:
        return clause
    before, after = clause[: found.start()] + name, clause[found.end():]
    pronoun = _pronoun(name)
    return before + re.sub(r"-(?:t-)?(?:elle|ils|elles)\b", lambda m: "-t-" + pronoun
                           if after[m.start() - 1: m.start()].lower() in ("e", "a", "c")
                           else "-" + pronoun, after, count=1)


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
        rewritten = _contrast_for(question, info.name, papers)
        if rewritten is not None:
            return rewritten
    rewritten = _one_of_a_pair(question, _named_as(info), [*papers, *_KIND_PATTERNS])
    if rewritten is not None:
        return rewritten
    text = _clauses_for(question, parts, info, infos)
    if press and not any(p.search(question) for p in papers):
        text = _press_in_general(text, info.name)
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
    antecedent = _antecedent(parts[0]) if own[0] != 0 else None
    pieces = []
    for i in own:
        piece = parts[i] if i == 0 else _restored(parts[i], antecedent)
        if i != 0 and piece == parts[i] and antecedent is None and _ANAPHOR.search(piece):
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
    texts = [well_formed(_contracted(_text_for(question, parts, by_slug.get(slug), infos, papers)))
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
