"""Rewrite a French question for one source: its subject, verb and pronouns made whole.

A comparison asks each paper in turn ("Le Gaulois ignore-t-il … ou la met-il en avant ?"), a
pair of sources as subject becomes one ("comment Le Gaulois jugeait-il …"), a pronoun or a
demonstrative is replaced by what it stands for ("a-t-il rapporté la mesure au sujet de …"). The
rules read the question's own words and the parse's genders; they never invent content.
"""

from __future__ import annotations

import re

from agent.engine.question_parse import parsed
from agent.engine.sources import is_debate
from agent.engine.text import LEADING_ARTICLE
from common.search import SubCorpusInfo
from common.text import casefold_without_accents


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


def contracted(text: str) -> str:
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


_APPOSED_PAIR = re.compile(r"\s*[,(]\s*(.+?)\s+(?:ou|et)\s+(.+?)\s*[,)]")


def contrast_for(text: str, name: str, papers: list[re.Pattern[str]]) -> str | None:
    """Rewrite "lequel … et lequel …" for one paper: "Le Gaulois ignore-t-il … ou la met-il … ?"."""
    if not _WHICH_SOURCE.search(text):
        return None
    pronoun = _pronoun(name)
    text = _drop_between_frame(text, papers)
    subject = _WHICH_SOURCE.search(text)
    if subject is None:
        return None
    # "lequel, Le Gaulois ou L'Intransigeant, critique …": the pair in apposition goes too.
    apposed = _APPOSED_PAIR.match(text, subject.end())
    if apposed and all(any(p.fullmatch(side.strip()) for p in papers)
                       for side in apposed.groups()):
        text = text[: subject.end()] + text[apposed.end():]
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


def one_of_a_pair(text: str, name: str, papers: list[re.Pattern[str]]) -> str | None:
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
KIND_PATTERNS = [re.compile(r"(?<![\w])(?:la Chambre(?: des députés)?|la presse|les journaux)"
                             r"(?![\w])", re.IGNORECASE)]


ANAPHOR = re.compile(r"\b(?:ce|cet|cette|ces|lui|leur|en|l['’]|le|la|les)\s*(?:[^\W\d_]+-|"
                     r"débats?|sujet|point|question|discussion|intervention|proposition)",
                     re.IGNORECASE)
_ABOUT = re.compile(r"\b(?:concernant|au sujet d|à propos d|sur|contre)\b", re.IGNORECASE)


# The kind of source a sub-question names by kind must be in the pair it replaces.
_KIND_OF = {"la Chambre": "chambre"}


def named_as(info: SubCorpusInfo) -> str:
    """How a sub-question names its source: the paper's title, or the Chamber."""
    return "la Chambre" if is_debate(info) else info.name


_LEUR = re.compile(r"\bleur\s+([^\W\d_]+)")


def _feminine(noun: str, question: str) -> bool:
    """Tell from the parse of the question whether a noun it holds is feminine."""
    for word in parsed(question).words:
        if word.text == noun:
            return word.gender == "Fem"
    return False


def antecedent(clause: str) -> str | None:
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


def restored(clause: str, antecedent: str | None) -> str:
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


def press_in_general(clause: str, name: str) -> str:
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


_POSSESSIVE = re.compile(r"(?:(?<=-il )|(?<=-on )|(?<= à ))(son|sa|ses)\s+([^\W\d_]+)|"
                         r"(?<=-elle )(son|sa|ses)\s+([^\W\d_]+)", re.IGNORECASE)


_COMPLEMENT = re.compile(r"\s(?:à|au|aux|de|du|des|d['’]|pour|sur|dans|contre|concernant|en|"
                         r"avec|par|face|quant|lors|et|ou|qui|que|qu['’])(?=\s|\w)", re.IGNORECASE)


def owner_named(clause: str, person: str | None) -> str:
    """Name whose thing a possessive means once its clause stands alone: "comment Le Gaulois
    résume-t-il sa position ?" asks of M. Rouvier's position, "la position … de M. Rouvier"."""
    found = _POSSESSIVE.search(clause) if person and person not in clause else None
    if found is None or person is None:
        return clause
    possessive = (found.group(1) or found.group(3)).lower()
    noun = found.group(2) or found.group(4)
    article = {"sa": "la ", "ses": "les "}.get(possessive) or (
        "l'" if noun[:1].lower() in "aeéèêiîoôuh" else "le ")
    rest = clause[found.end():].rstrip(" ?")
    if re.search(r"\b(?:M\.|Mme|celui|celle|ceux|celles)(?:\s|$)", rest):
        return clause  # another owner follows: which one the possessive means is not sure
    # The owner follows the noun and its adjectives, before what completes it ("la solution
    # alternative de M. X pour aider …") or a second noun joined to it ("et son résultat").
    cut = _COMPLEMENT.search(rest)
    at = cut.start() if cut else len(rest)
    return f"{clause[: found.start()]}{article}{noun}{rest[:at]} de {person}{rest[at:]}"
