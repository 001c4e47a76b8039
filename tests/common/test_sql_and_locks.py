"""LIKE pattern escaping and the cross-process file lock."""

from __future__ import annotations

import fcntl
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from common.locks import file_lock
from common.sql import escape_like, like_pattern


def test_like_pattern_escapes_wildcards_and_the_escape_character():
    assert like_pattern("boulanger") == "%boulanger%"
    assert like_pattern("100%_sur") == "%100\\%\\_sur%"
    assert escape_like("a\\b") == "a\\\\b"


def _like_regex(pattern: str) -> re.Pattern[str]:
    """Translate a LIKE pattern (backslash escape) into a regular expression."""
    out, i = [], 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            i += 1
            out.append(re.escape(pattern[i]))
        else:
            out.append({"%": ".*", "_": "."}.get(ch, re.escape(ch)))
        i += 1
    return re.compile("".join(out), re.DOTALL)


@given(st.text(alphabet="ab%_\\ ", max_size=10), st.text(alphabet="ab%_\\ ", max_size=20))
def test_like_pattern_matches_exactly_the_texts_holding_the_phrase(phrase, text):
    assert bool(_like_regex(like_pattern(phrase)).fullmatch(text)) == (phrase in text)


def test_file_lock_creates_its_folder_and_excludes_other_holders(tmp_path):
    path = tmp_path / "nested" / "build.lock"
    with file_lock(path):
        assert path.exists()
        with open(path) as other, pytest.raises(BlockingIOError):
            fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
    with open(path) as other:
        fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)  # released after the block
