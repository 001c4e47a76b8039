"""French month names, French citation dates, and the dates written in French questions.

Two readers serve two callers and keep their own rules:

- ``extract_date`` (the engine) returns the most precise date written, as text: "YYYY-MM-DD",
  "YYYY-MM" or "YYYY". Years run from 1500 to 2099; a day only has to be between 1 and 31 (the
  calendar is not checked); a bare year counts.
- ``extract_date_window`` (retrieval) returns the days a question names, as a ``DateWindow``: one
  day, or a whole month. Any four-digit year is read; impossible days fall through to the next
  rule; a bare year is too vague and gives None.
"""

from __future__ import annotations

import calendar
import datetime as dt
import re

from common.search import DateWindow
from common.text import casefold_without_accents, lower_without_accents

# Month names as printed, and the month number of each name once folded (no accents).
FRENCH_MONTH_NAMES = (
    "janvier", "février", "mars", "avril", "mai", "juin", "juillet", "août",
    "septembre", "octobre", "novembre", "décembre",
)  # fmt: skip
FRENCH_MONTHS = {
    lower_without_accents(name): number for number, name in enumerate(FRENCH_MONTH_NAMES, 1)
}
_MONTH = "|".join(FRENCH_MONTHS)

# extract_date: years 1500-2099, "1er" read as day 1.
_YEAR = r"(1[5-9]\d\d|20\d\d)"
_TEXT_ISO = re.compile(rf"\b{_YEAR}-(\d\d)-(\d\d)\b")
_TEXT_DAY = re.compile(rf"\b(\d{{1,2}})(?:er)?\s+({_MONTH})\s+{_YEAR}\b")
_TEXT_MONTH = re.compile(rf"\b({_MONTH})\s+{_YEAR}\b")
_TEXT_YEAR = re.compile(rf"\b{_YEAR}\b")
# A day without its year ("le 12 mai"): the year is the one the text names elsewhere.
_TEXT_DAY_NO_YEAR = re.compile(rf"\b(\d{{1,2}})(?:er)?\s+({_MONTH})\b(?!\s+\d)")
# Seasons as the calendar has them (astronomical, rounded to whole months' edges).
_SEASONS = {"printemps": ((3, 21), (6, 20)), "ete": ((6, 21), (9, 22)),
            "automne": ((9, 23), (12, 20)), "hiver": ((12, 21), (3, 20))}
_TEXT_SEASON = re.compile(
    rf"\b(?:au |a l'|en )?(printemps|ete|automne|hiver)\s+(?:de\s+)?{_YEAR}\b")

# extract_date_window: any four-digit year.
_WINDOW_ISO = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_WINDOW_DAY = re.compile(rf"\b(1er|\d{{1,2}})\s+({_MONTH})\s+(\d{{4}})\b")
_WINDOW_MONTH = re.compile(rf"\b({_MONTH})\s+(\d{{4}})\b")


def format_french_date(date: dt.date | None, precision: str) -> str:
    """Format a date the way a French citation prints it ("1er mars 1887", "mars 1887", "1887").

    ``precision`` is "day", "month" or "year"; no date gives "".
    """
    if date is None:
        return ""
    if precision == "year":
        return str(date.year)
    month = FRENCH_MONTH_NAMES[date.month - 1]
    if precision == "month":
        return f"{month} {date.year}"
    day = "1er" if date.day == 1 else str(date.day)
    return f"{day} {month} {date.year}"


def extract_date(text: str) -> str | None:
    """Return the most precise date written in the text: YYYY-MM-DD, YYYY-MM or YYYY."""
    folded = casefold_without_accents(text)
    iso = _TEXT_ISO.search(folded)
    if iso:
        return iso.group(0)
    full = _TEXT_DAY.search(folded)
    if full:
        day, month, year = int(full.group(1)), FRENCH_MONTHS[full.group(2)], full.group(3)
        if 1 <= day <= 31:
            return f"{year}-{month:02d}-{day:02d}"
    year = _TEXT_YEAR.search(folded)
    day_only = _TEXT_DAY_NO_YEAR.search(folded)
    if day_only and year and 1 <= int(day_only.group(1)) <= 31:
        month, day = FRENCH_MONTHS[day_only.group(2)], int(day_only.group(1))
        return f"{year.group(0)}-{month:02d}-{day:02d}"
    month_year = _TEXT_MONTH.search(folded)
    if month_year:
        return f"{month_year.group(2)}-{FRENCH_MONTHS[month_year.group(1)]:02d}"
    return year.group(0) if year else None


def extract_season(text: str) -> DateWindow | None:
    """Return the days of a season named with its year ("au printemps 1887"), else None."""
    found = _TEXT_SEASON.search(casefold_without_accents(text))
    if found is None:
        return None
    (start_month, start_day), (end_month, end_day) = _SEASONS[found.group(1)]
    year = int(found.group(2))
    end_year = year + 1 if end_month < start_month else year
    return DateWindow(dt.date(year, start_month, start_day), dt.date(end_year, end_month, end_day))


def extract_date_window(text: str) -> DateWindow | None:
    """Return the first ISO day, French day or French month named in the text, else None."""
    folded = lower_without_accents(text)
    if match := _WINDOW_ISO.search(folded):
        try:
            return DateWindow.around(dt.date(*map(int, match.groups())))
        except ValueError:
            pass
    if match := _WINDOW_DAY.search(folded):
        day = 1 if match.group(1) == "1er" else int(match.group(1))
        month = FRENCH_MONTHS[match.group(2)]
        try:
            return DateWindow.around(dt.date(int(match.group(3)), month, day))
        except ValueError:
            pass
    if match := _WINDOW_MONTH.search(folded):
        year, month = int(match.group(2)), FRENCH_MONTHS[match.group(1)]
        last = calendar.monthrange(year, month)[1]
        return DateWindow(dt.date(year, month, 1), dt.date(year, month, last))
    return extract_season(text)
