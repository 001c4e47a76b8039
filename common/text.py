"""Accent folding for French OCR text, in the variants its callers rely on.

The variants differ on purpose and must not be merged: rankings, date parsing and snippet
positions were measured with each one as it is.

- ``lower_without_accents``: ``str.lower``, then accents removed. BM25 reference tokens, the
  retrieval date resolver and the hashing embedder use it.
- ``casefold_without_accents``: the ligatures œ and æ spelt out, ``str.casefold``, then accents
  removed. The engine's tokens, terms and dates use it.
- ``lower_keeping_positions``: one output character per character of ``text.lower()`` (its base
  letter; blanks become a space), so an offset found in the folded text indexes the lower-cased
  original. Search-result snippets use it.
"""

from __future__ import annotations

import functools
import re
import unicodedata


def without_combining_marks(text: str) -> str:
    """Decompose ``text`` (NFKD) and drop every combining mark: "é" becomes "e", "ﬁ" "fi"."""
    decomposed = unicodedata.normalize("NFKD", text)
    # Look each distinct character up once, then delete the marks in one regex pass.
    marks = frozenset(ch for ch in set(decomposed) if unicodedata.combining(ch))
    return _marks_pattern(marks).sub("", decomposed) if marks else decomposed


@functools.lru_cache(maxsize=256)
def _marks_pattern(marks: frozenset[str]) -> re.Pattern[str]:
    return re.compile("[" + "".join(re.escape(ch) for ch in sorted(marks)) + "]")


def lower_without_accents(text: str) -> str:
    """Lower-case ``text`` with ``str.lower`` and strip its accents."""
    return without_combining_marks(text.lower())


def _casefold_character(char: str) -> str:
    spelt = char.replace("œ", "oe").replace("Œ", "oe").replace("æ", "ae").replace("Æ", "ae")
    return without_combining_marks(spelt.casefold())


_CASEFOLDED: dict[int, str] = {}  # character -> its fold, filled as characters are met


def casefold_without_accents(text: str) -> str:
    """Spell out œ/æ, case-fold ``text`` with ``str.casefold`` and strip its accents."""
    # Each character folds on its own, so a translation table of the characters met so far
    # folds long OCR texts at C speed.
    missing = {char for char in set(text) if ord(char) not in _CASEFOLDED}
    for char in missing:
        _CASEFOLDED[ord(char)] = _casefold_character(char)
    return text.translate(_CASEFOLDED)


def lower_keeping_positions(text: str) -> str:
    """Lower-case ``text`` and keep the first NFKD character of each character; blanks become " ".

    The result is exactly as long as ``text.lower()``, so positions carry over.
    """
    return "".join(
        unicodedata.normalize("NFKD", ch)[0] if ch.strip() else " " for ch in text.lower()
    )
