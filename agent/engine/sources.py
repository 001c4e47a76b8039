"""Tell the kind of source a sub-corpus holds (debates, press) from how the archive names it."""

from __future__ import annotations

from common.search import SubCorpusInfo
from common.text import casefold_without_accents


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
