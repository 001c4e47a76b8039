"""Check that every word a rationale quotes is printed, as a whole word, in its passage.

Rationales quote the words a passage shares with the question (« princes »). A quoted word
must be one of the passage's own words exactly as printed, OCR misreadings included: never a
question word the passage lacks, nor a piece of a longer word ("princes" in "principe").
"""

from __future__ import annotations

import re

from agent.engine.text import printed_words

_QUOTED = re.compile(r"«\s*(.+?)\s*»|“(.+?)”")


def quoted_words(rationale: str) -> list[str]:
    """Return the words a rationale quotes, in order."""
    return [french or english for french, english in _QUOTED.findall(rationale)]


def unsupported_claims(rationale: str, text: str) -> list[str]:
    """Return the quoted words of a rationale that the text does not print as whole words."""
    words = printed_words(text)
    return [word for word in quoted_words(rationale) if word not in words]
