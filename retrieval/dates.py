"""Resolve dates written in French questions ("le 26 février 1887", "en mars 1887")."""

from __future__ import annotations

import calendar
import datetime as dt
import re
import unicodedata

from retrieval.types import DateWindow

MONTHS = {
    "janvier": 1, "fevrier": 2, "mars": 3, "avril": 4, "mai": 5, "juin": 6, "juillet": 7,
    "aout": 8, "septembre": 9, "octobre": 10, "novembre": 11, "decembre": 12,
}
_MONTH = "|".join(MONTHS)
_DAY_RE = re.compile(rf"\b(1er|\d{{1,2}})\s+({_MONTH})\s+(\d{{4}})\b")
_MONTH_RE = re.compile(rf"\b({_MONTH})\s+(\d{{4}})\b")
_ISO_RE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")


def _fold(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text.lower())
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def resolve_window(text: str) -> DateWindow | None:
    """Return the first day or month named in the text; a bare year is too vague to use."""
    folded = _fold(text)
    if match := _ISO_RE.search(folded):
        try:
            return DateWindow.around(dt.date(*map(int, match.groups())))
        except ValueError:
            pass
    if match := _DAY_RE.search(folded):
        day = 1 if match.group(1) == "1er" else int(match.group(1))
        try:
            return DateWindow.around(dt.date(int(match.group(3)), MONTHS[match.group(2)], day))
        except ValueError:
            pass
    if match := _MONTH_RE.search(folded):
        year, month = int(match.group(2)), MONTHS[match.group(1)]
        last = calendar.monthrange(year, month)[1]
        return DateWindow(dt.date(year, month, 1), dt.date(year, month, last))
    return None
