"""Fold, tokenise and match French OCR text without any model."""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from common.french_dates import extract_date as extract_date  # the engine's date reader
from common.search import SubCorpusInfo
from common.text import casefold_without_accents


def _words(block: str) -> frozenset[str]:
    """Turn a whitespace-separated block into a word set."""
    return frozenset(block.split())


_WORD = re.compile(r"[0-9a-z]+")
_CAP_WORD = re.compile(r"(?:d['’])?[A-ZÀ-ÖØ-Þ][\w'’-]*")
_HONORIFICS = ("M", "MM", "Mme", "Mgr")

STOPWORDS = _words(
    """
    a ai aie aient aies ait as au aucun aupres aussi autre autres aux avaient avais avait avant
    avec avoir ayant c ca ce ceci cela celle celles celui cependant ces cet cette ceux chaque
    ci comme comment contre d dans de depuis des deux doit donc dont du durant elle elles en
    encore entre est et etaient etait ete etre eu eux fait faire fut il ils j je jusqu l la
    laquelle le lequel les lesquelles lesquels leur leurs lui m ma mais me meme memes mes moi
    mon n ne ni non nos notre nous on ont ou par parmi pas pendant peu peut plus pour pourquoi
    qu quand que quel quelle quelles quels qui quoi s sa sans se selon ses si son sont sous
    sur t ta te tel telle tels telles tes toi ton tous tout toute toutes tres tu un une
    vers vos votre vous y afin ainsi alors apres aujourd hui avoir bien cas certains cet
    chez dela des dit dits elle etc fois font ici ils jamais la lors lorsque moins notamment
    particulier plusieurs point quelque quelques sera seront serait soit sont tant toujours
    mm mme mr ete etaient
    """
)

# Words that frame a question about sources rather than describe the evidence sought.
FRAMING_WORDS = _words(
    """
    journal journaux presse article articles rapporte rapportent rapporter relate relatent
    commente commentent commenter decrit decrivent decrire presente presentent presenter
    evoque evoquent traite traitent traitement traiter ton accent met mettent reaction
    reactions perception donne donnent adopte adoptent souligne soulignent lequel laquelle
    lesquels quelle quel quels quelles comment pourquoi difference differences apparait
    apparaissent cadrage vision visions point vue maniere davantage plutot explique
    expliquent resume resument illustre illustrent concernant sujet egard propos
    reagit reagissent reagi rapportee rapportees rapportes
    """
)

_SENTENCE_START_CAPS = _words(
    """
    en quel quelle quels quelles comment pourquoi lequel laquelle lesquels entre selon dans
    le la les un une des au aux du de et ou que qui quoi ou combien sur pour par avec
    """
)


def tokens(text: str) -> list[str]:
    """Return folded word tokens in order."""
    return _WORD.findall(casefold_without_accents(text))


def content_terms(text: str, *, drop_framing: bool = True) -> list[str]:
    """Return distinct folded content words (no stopwords), in first-seen order."""
    seen: dict[str, None] = {}
    for tok in tokens(text):
        if len(tok) < 3 or tok in STOPWORDS or tok.isdigit():
            continue
        if drop_framing and tok in FRAMING_WORDS:
            continue
        seen.setdefault(tok, None)
    return list(seen)


def stem(term: str) -> str:
    """Cut a crude French suffix so inflected forms share a prefix."""
    if len(term) <= 5:
        return term
    return term[: max(5, len(term) - 3)]


@lru_cache(maxsize=65536)
def inflection_base(word: str) -> str:
    """Strip French plural and feminine endings: "discutées", "discuté" -> "discut".

    Only endings that change no meaning are cut, so "princes" and "principe" stay apart.
    """
    if len(word) > 4 and word.endswith("aux"):
        return word[:-3] + "al"
    if len(word) > 4 and word[-1] in "sx":
        word = word[:-1]
    while len(word) > 4 and word.endswith("e"):
        word = word[:-1]
    return word


def within_one_edit(a: str, b: str) -> bool:
    """Tell whether two words differ by at most one substituted, added or dropped letter."""
    if abs(len(a) - len(b)) > 1:
        return False
    if len(a) > len(b):
        a, b = b, a
    i = 0
    while i < len(a) and a[i] == b[i]:
        i += 1
    if len(a) == len(b):
        return a[i + 1 :] == b[i + 1 :]
    return a[i:] == b[i + 1 :]


# A word as printed; a word cut at a line end ("ar- ticle") is read as one word.
_PRINTED_WORD = re.compile(r"[^\W_]+(?:-\s+[^\W\d_]+)?")
_LINE_CUT = re.compile(r"-\s+")
_BLANKS = re.compile(r"\s+")
FUZZY_MIN = 7  # shorter words are matched only exactly or by inflection: OCR slips stay rare


def _one_line(printed: str) -> str:
    """Write a word cut at a line end on one line ("pré-\nsident" -> "pré- sident")."""
    return _BLANKS.sub(" ", printed)


def printed_words(text: str) -> set[str]:
    """Return every whole word of a text as printed ("ar- ticle" kept as one, on one line)."""
    return {_one_line(match.group()) for match in _PRINTED_WORD.finditer(text)}


@lru_cache(maxsize=65536)
def _folded_words(printed: str) -> tuple[str, ...]:
    """Fold one printed word (words recur across chunks and sentences, so this is cached)."""
    return tuple(_WORD.findall(casefold_without_accents(_LINE_CUT.sub("", printed))))


class TermMatcher:
    """Match question terms against whole words of one text, as the text writes them.

    A term matches a word of the text that is the same word once folded, an inflection of it
    (plural, feminine) or, for long words, an OCR misreading of it (one letter off). Never a
    prefix or a piece of a longer word: "princes" is not found in "principe". `written(term)`
    returns the matching word exactly as printed, so a claim can quote the document.
    """

    def __init__(self, text: str) -> None:
        self._written: dict[str, str] = {}
        for printed in _PRINTED_WORD.findall(text):
            for word in _folded_words(printed):
                self._written.setdefault(word, _one_line(printed))
        self._by_base: dict[str, str] | None = None
        self._by_shape: dict[tuple[int, str], list[str]] | None = None

    def written(self, term: str) -> str | None:
        """Return the word of the text the term (folded) matches, as printed; None if absent."""
        found = self._written.get(term)
        if found is not None:
            return found
        if self._by_base is None:
            self._by_base = {}
            for word in sorted(self._written):
                self._by_base.setdefault(inflection_base(word), word)
        inflected = self._by_base.get(inflection_base(term))
        if inflected is not None:
            return self._written[inflected]
        if len(term) < FUZZY_MIN:
            return None
        if self._by_shape is None:
            self._by_shape = {}
            for word in sorted(self._written):
                self._by_shape.setdefault((len(word), word[0]), []).append(word)
        for size in (len(term), len(term) - 1, len(term) + 1):
            for word in self._by_shape.get((size, term[0]), ()):
                if within_one_edit(word, term):
                    return self._written[word]
        return None

    def matches(self, term: str) -> bool:
        """Tell whether the term (folded) occurs as a whole word, inflected or misread."""
        return self.written(term) is not None

    def matched(self, terms: Iterable[str]) -> list[str]:
        """Return the terms that match, in the given order."""
        return [term for term in terms if self.matches(term)]


def extract_entities(text: str) -> list[str]:
    """Return capitalised surface forms ("M. Lejeune", "Camille Pelletan"), unchanged."""
    found: dict[str, None] = {}
    words = re.findall(r"\S+", text)
    index = 0
    while index < len(words):
        raw = words[index].strip("«»\"(),;:?!.")
        honorific = raw in _HONORIFICS and words[index].startswith(raw + ".")
        start = index + 1 if honorific else index
        parts: list[str] = []
        pos = start
        while pos < len(words):
            word = words[pos].strip("«»\"(),;:?!")
            bare = word.rstrip(".")
            if parts and bare in _HONORIFICS:
                break
            if not _CAP_WORD.fullmatch(bare) and bare not in ("de", "d'", "du", "la"):
                break
            if bare in ("de", "d'", "du", "la") and (not parts or pos + 1 >= len(words)):
                break
            parts.append(bare)
            if words[pos].rstrip("«»\"()").endswith((",", ";", ":", "?", "!", ".")):
                pos += 1
                break
            pos += 1
        while parts and parts[-1] in ("de", "d'", "du", "la"):
            parts.pop()
        if parts:
            first = casefold_without_accents(parts[0])
            sentence_start = index == 0 or words[index - 1].endswith((".", "?", "!"))
            if honorific:
                found.setdefault(words[index][: len(raw) + 1] + " " + " ".join(parts), None)
            elif not (len(parts) == 1 and (first in _SENTENCE_START_CAPS or sentence_start)):
                if first in _SENTENCE_START_CAPS:
                    parts = parts[1:]
                if parts:
                    found.setdefault(" ".join(parts), None)
            index = max(pos, index + 1)
        else:
            index += 1
    return list(found)


def surnames(entities: Iterable[str]) -> list[str]:
    """Return entity names without honorifics ("M. Lejeune" -> "Lejeune"), distinct."""
    out = []
    for entity in entities:
        bare = re.sub(r"^(MM?|Mme|Mgr)\.\s*", "", entity).strip()
        if len(bare) >= 3:
            out.append(bare)
    return list(dict.fromkeys(out))


def name_keys(entities: Iterable[str]) -> list[str]:
    """Return the folded word a name is found by: its last ("Camille Pelletan" -> "pelletan")."""
    keys = [casefold_without_accents(name).split()[-1] for name in surnames(entities)]
    return list(dict.fromkeys(key for key in keys if len(key) >= 3))


def is_full_date(value: str | None) -> bool:
    """Tell whether the value is a full ISO date."""
    return bool(value) and re.fullmatch(r"\d{4}-\d{2}-\d{2}", value or "") is not None


def normalise_query(query: str) -> str:
    """Normalise a query for duplicate detection."""
    return " ".join(tokens(query))


# A French article at the start of a (lower-cased) sub-corpus name: "le Gaulois" is "Gaulois".
LEADING_ARTICLE = re.compile(r"^(le |la |les |l'|l’)")


def strip_mentions(text: str, infos: list[SubCorpusInfo]) -> str:
    """Drop sub-corpus names from a query: they never occur in the documents themselves."""
    result = text
    for info in infos:
        for alias in (info.name, LEADING_ARTICLE.sub("", info.name.lower())):
            if len(alias) >= 4:
                result = re.sub(re.escape(alias), " ", result, flags=re.IGNORECASE)
    result = re.sub(r"\bentre\s+et\s*,?", " ", result, flags=re.IGNORECASE)
    return " ".join(result.split())


# How a plan says whose account a sub-question asks for ("D'après Le Gaulois, …").
_ACCORDING_TO = re.compile(r"^(?:D['’]après|According to) [^,]+, ")


def sub_question_query(text: str, infos: list[SubCorpusInfo]) -> str:
    """What a sub-question asks, without the sources it names: no passage prints them."""
    return strip_mentions(_ACCORDING_TO.sub("", text), infos) or text


@lru_cache(maxsize=256)
def matcher_for(text: str) -> TermMatcher:
    """Return the term matcher of a text, shared (a chunk is judged, briefed and re-read)."""
    return TermMatcher(text)
