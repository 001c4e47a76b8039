"""French month names, citation dates and the two date readers (engine text, retrieval window)."""

from __future__ import annotations

import calendar
import datetime as dt
import re

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from common.french_dates import (
    FRENCH_MONTH_NAMES,
    FRENCH_MONTHS,
    extract_date,
    extract_date_window,
    format_french_date,
)
from common.search import DateWindow
from common.text import casefold_without_accents, lower_without_accents


def test_month_tables_agree():
    assert len(FRENCH_MONTH_NAMES) == 12
    assert FRENCH_MONTHS["fevrier"] == 2 and FRENCH_MONTHS["aout"] == 8
    assert FRENCH_MONTHS["decembre"] == 12
    assert [FRENCH_MONTHS[lower_without_accents(n)] for n in FRENCH_MONTH_NAMES] == list(
        range(1, 13)
    )


def test_format_french_date_prints_citation_dates():
    assert format_french_date(dt.date(1887, 3, 1), "day") == "1er mars 1887"
    assert format_french_date(dt.date(1887, 2, 26), "day") == "26 février 1887"
    assert format_french_date(dt.date(1887, 8, 1), "month") == "août 1887"
    assert format_french_date(dt.date(1887, 1, 1), "year") == "1887"
    assert format_french_date(None, "") == ""


def test_extract_date_returns_the_most_precise_date_written():
    assert extract_date("Que dit Le Gaulois le 26 février 1887 ?") == "1887-02-26"
    assert extract_date("le 1er MARS 1887") == "1887-03-01"
    assert extract_date("En août 1887") == "1887-08"
    assert extract_date("En 1887, qui parle ?") == "1887"
    assert extract_date("le 1887-02-26 puis mars 1888") == "1887-02-26"
    assert extract_date("en 1499") is None
    # The calendar is not checked: the engine keeps what the question says.
    assert extract_date("le 31 février 1887") == "1887-02-31"
    assert extract_date("le 32 février 1887") == "1887-02"


def test_extract_date_window_names_a_day_or_a_month():
    assert extract_date_window("le 26 février 1887") == DateWindow.around(dt.date(1887, 2, 26))
    assert extract_date_window("le 1er mars 1887") == DateWindow.around(dt.date(1887, 3, 1))
    assert extract_date_window("En mars 1887, qui parle ?") == DateWindow(
        dt.date(1887, 3, 1), dt.date(1887, 3, 31)
    )
    assert extract_date_window("En 1887, qui parle ?") is None
    # Impossible days fall through to the next rule.
    assert extract_date_window("le 31 février 1887") == DateWindow(
        dt.date(1887, 2, 1), dt.date(1887, 2, 28)
    )
    assert extract_date_window("1887-02-30, le 3 mai 1887") == DateWindow.around(
        dt.date(1887, 5, 3)
    )
    assert extract_date_window("le 2 mai 1499") == DateWindow.around(dt.date(1499, 5, 2))


# The readers the engine and retrieval had before the shared module, kept as oracles.
_MONTHS = {
    "janvier": 1, "fevrier": 2, "mars": 3, "avril": 4, "mai": 5, "juin": 6, "juillet": 7,
    "aout": 8, "septembre": 9, "octobre": 10, "novembre": 11, "decembre": 12,
}  # fmt: skip


def _engine_extract_date(text: str) -> str | None:
    folded = casefold_without_accents(text)
    iso = re.search(r"\b(1[5-9]\d\d|20\d\d)-(\d\d)-(\d\d)\b", folded)
    if iso:
        return iso.group(0)
    months = "|".join(_MONTHS)
    full = re.search(rf"\b(\d{{1,2}})(?:er)?\s+({months})\s+(1[5-9]\d\d|20\d\d)\b", folded)
    if full:
        day, month, year = int(full.group(1)), _MONTHS[full.group(2)], full.group(3)
        if 1 <= day <= 31:
            return f"{year}-{month:02d}-{day:02d}"
    month_year = re.search(rf"\b({months})\s+(1[5-9]\d\d|20\d\d)\b", folded)
    if month_year:
        return f"{month_year.group(2)}-{_MONTHS[month_year.group(1)]:02d}"
    year = re.search(r"\b(1[5-9]\d\d|20\d\d)\b", folded)
    return year.group(0) if year else None


def _retrieval_window(text: str) -> DateWindow | None:
    folded = lower_without_accents(text)
    month_names = "|".join(_MONTHS)
    if match := re.search(r"\b(\d{4})-(\d{2})-(\d{2})\b", folded):
        try:
            return DateWindow.around(dt.date(*map(int, match.groups())))
        except ValueError:
            pass
    if match := re.search(rf"\b(1er|\d{{1,2}})\s+({month_names})\s+(\d{{4}})\b", folded):
        day = 1 if match.group(1) == "1er" else int(match.group(1))
        try:
            return DateWindow.around(dt.date(int(match.group(3)), _MONTHS[match.group(2)], day))
        except ValueError:
            pass
    if match := re.search(rf"\b({month_names})\s+(\d{{4}})\b", folded):
        year, month = int(match.group(2)), _MONTHS[match.group(1)]
        last = calendar.monthrange(year, month)[1]
        return DateWindow(dt.date(year, month, 1), dt.date(year, month, last))
    return None


PIECES = st.sampled_from([
    "le", "en", "1er", "1", "2er", "26", "31", "0", "00", "99", "février", "FÉVRIER", "fevrier",
    "août", "Aout", "mars", "mai", "Décembre", "1887", "1499", "2024", "2100", "0887",
    "1887-02-26", "1887-02-30", "1887-13-01", "1887-2-6", ",", "?", "l'an", "Straße", "œuvre",
])
DATE_LIKE = st.lists(PIECES, max_size=8).map(" ".join)


@given(st.one_of(DATE_LIKE, st.text(max_size=30)))
@example("1er février le 1887")  # a first of the month, its year named apart
def test_both_readers_match_the_copies_they_replace(text):
    """The copies predate two rules added since: a day whose year the text names elsewhere
    ("le 12 mai … en 1887") and a season; where neither applies, nothing else changed."""
    if extract_date(text) != _engine_extract_date(text):
        assert re.search(r"\d(?:er)?\s+\S+", text) and len(extract_date(text) or "") == 10
    assert extract_date_window(text) == _retrieval_window(text)


@pytest.mark.parametrize(("text", "expected"), [
    ("la séance du 12 mai 1887", "1887-05-12"),
    ("Que dit la Chambre le 12 mai, en 1887 ?", "1887-05-12"),
    ("en mai 1887", "1887-05"),
    ("au printemps 1887", "1887"),
])
def test_french_days_and_periods_give_the_target_date(text, expected):
    assert extract_date(text) == expected


def test_a_season_gives_its_window():
    window = extract_date_window("Que dit la presse au printemps 1887 ?")
    assert window == DateWindow(dt.date(1887, 3, 21), dt.date(1887, 6, 20))
    winter = extract_date_window("durant l'hiver 1887")
    assert winter == DateWindow(dt.date(1887, 12, 21), dt.date(1888, 3, 20))
