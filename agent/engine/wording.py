"""Word the rationales a historian reads, in the question's language, within a length limit.

Rationales say why a passage matters; the figures behind a verdict (scores, matched terms,
ranks) stay in its signals and never appear here. Only French and English are written; any
other question gets English.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import date

from common.text import casefold_without_accents

FRENCH = "fr"
ENGLISH = "en"



def _words(block: str) -> frozenset[str]:
    return frozenset(block.split())


_FRENCH_WORDS = _words("""
    le la les des du de et est que qui quel quelle quels quelles une un dans sur pour par
    comment pourquoi lequel laquelle entre selon avec sont ont il elle ils au aux ce cette
    ces son sa ses leur en
""")
_ENGLISH_WORDS = _words("""
    the of and is are was were what which who how why did does do to in on for with by
    between about from that this these those their his her its an
""")
_ELIDED = re.compile(r"^(?:l|d|qu|n|s|c|j|m)['’]")
_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)?")

_MONTHS = {
    FRENCH: ("janvier", "février", "mars", "avril", "mai", "juin", "juillet", "août",
             "septembre", "octobre", "novembre", "décembre"),
    ENGLISH: ("January", "February", "March", "April", "May", "June", "July", "August",
              "September", "October", "November", "December"),
}

_PHRASES = {
    FRENCH: {
        "accept_named": "Nomme {names} et reprend {terms}, comme la question le demande",
        "accept_named_only": "Nomme {names}, au cœur de la question",
        "accept": "Reprend {terms}, au cœur de la question",
        "accept_bare": "Parmi les passages les plus proches de la question",
        "hold": "Ne reprend que {terms} ; lien avec la question à vérifier",
        "hold_bare": "Lien avec la question incertain ; à vérifier",
        "reject": "N'a en commun avec la question que {terms}",
        "reject_bare": "Ne traite d'aucun point de la question",
        "on_day": " (le jour demandé)",
        "sibling": "Autre passage d'une source déjà retenue",
        "echoes": "Reprend ce qu'établissent les sources retenues : {terms}",
        "widened": "Daté juste hors de la période cherchée ({window}) ; gardé en réserve",
        "missing_verdict": "Aucun verdict donné à l'examen ; gardé en réserve",
        "unreviewed": "Pas examiné avant la fin de la recherche ; gardé en réserve",
        "screened": "Écarté avant lecture par le modèle : le juge appris le tient pour étranger "
                    "à la question",
        "and": " et ",
        "to": " au ",
        "quoted": "« {} »",
    },
    ENGLISH: {
        "accept_named": "Names {names} and takes up {terms}, as the question asks",
        "accept_named_only": "Names {names}, at the heart of the question",
        "accept": "Takes up {terms}, at the heart of the question",
        "accept_bare": "Among the passages closest to the question",
        "hold": "Shares only {terms} with the question; link to be checked",
        "hold_bare": "Link to the question unclear; to be checked",
        "reject": "Shares only {terms} with the question",
        "reject_bare": "Deals with none of the question's points",
        "on_day": " (on the day asked)",
        "sibling": "Another passage of a source already accepted",
        "echoes": "Echoes what the accepted sources establish: {terms}",
        "widened": "Dated just outside the period searched ({window}); kept in reserve",
        "missing_verdict": "No verdict given at review; kept in reserve",
        "unreviewed": "Not reviewed before the search ended; kept in reserve",
        "screened": "Screened out before the model read it: the learnt judge finds it foreign "
                    "to the question",
        "and": " and ",
        "to": " to ",
        "quoted": "“{}”",
    },
}


def language_of(text: str) -> str:
    """Tell whether a question is French or English (the archive's language, French, on a tie)."""
    words = [casefold_without_accents(w) for w in _WORD.findall(text)]
    french = sum(1 for w in words if w in _FRENCH_WORDS or _ELIDED.match(w))
    english = sum(1 for w in words if w in _ENGLISH_WORDS)
    return ENGLISH if english > french else FRENCH


def surface_forms(question: str) -> dict[str, str]:
    """Map each folded word of the question to its form as written (lower case, accents kept)."""
    forms: dict[str, str] = {}
    for word in re.findall(r"[^\W_]+", question):
        forms.setdefault(casefold_without_accents(word), word.lower())
    return forms


def phrase(language: str, key: str, **values: str) -> str:
    """Return one fixed phrase in the language, filled in."""
    table = _PHRASES.get(language, _PHRASES[ENGLISH])
    return table[key].format(**values)


def listing(language: str, items: Sequence[str], *, quoted: bool = False) -> str:
    """Join items as prose: "a, b et c" / "a, b and c", each quoted if asked."""
    table = _PHRASES.get(language, _PHRASES[ENGLISH])
    items = [table["quoted"].format(item) if quoted else item for item in items]
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + phrase(language, "and") + items[-1]


def fitted(language: str, key: str, limit: int, *, terms: Sequence[str] = (),
           names: Sequence[str] = (), tail: str = "") -> str:
    """Fill a phrase with as many terms as fit within `limit` characters (at least one)."""
    for count in range(len(terms), 0, -1):
        text = phrase(language, key, terms=listing(language, terms[:count], quoted=True),
                      names=listing(language, names)) + tail
        if len(text) <= limit:
            return text
    text = phrase(language, key, terms=listing(language, terms[:1], quoted=True),
                  names=listing(language, names[:1])) + tail
    return text[:limit].rsplit(" ", 1)[0] if len(text) > limit else text


def readable_day(value: str | None, language: str) -> str:
    """Write an ISO day as prose ("26 février 1887"); anything else is returned as it is."""
    if not value:
        return "…"
    try:
        day = date.fromisoformat(value[:10])
    except ValueError:
        return value
    month = _MONTHS.get(language, _MONTHS[ENGLISH])[day.month - 1]
    first = "1er" if language == FRENCH and day.day == 1 else str(day.day)
    return f"{first} {month} {day.year}"


def window_phrase(date_from: str | None, date_to: str | None, language: str) -> str:
    """Write a searched period as prose."""
    if date_from == date_to:
        return readable_day(date_from, language)
    return (readable_day(date_from, language) + phrase(language, "to")
            + readable_day(date_to, language))
