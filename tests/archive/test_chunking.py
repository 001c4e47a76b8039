"""The chunker cuts at sentence boundaries, respects the cap and maps spans back exactly."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from archive.chunking import chunk_text, sentence_spans

WORDS = st.sampled_from([
    "M.", "le", "président.", "Messieurs,", "laChambre", "parole.M.", "Ricard", "!", "?",
    "séance", "ouverte.", "«", "»", "1887.", "art.", "MM.", "Floquet", "…", "Oui!Non", "x" * 30,
])
SEPARATORS = st.sampled_from([" ", "  ", "\n", "\n\n", "\t", " \n "])


@st.composite
def documents(draw):
    words = draw(st.lists(WORDS, min_size=0, max_size=120))
    seps = draw(st.lists(SEPARATORS, min_size=len(words), max_size=len(words)))
    lead = draw(SEPARATORS)
    return lead + "".join(w + s for w, s in zip(words, seps, strict=True))


@settings(max_examples=300, deadline=None)
@given(text=documents(), cap=st.integers(min_value=1, max_value=40))
def test_chunk_spans_round_trip_cover_text_and_respect_the_cap(text, cap):
    chunks = chunk_text(text, max_tokens=cap)
    covered = [False] * len(text)
    previous_end = 0
    for i, chunk in enumerate(chunks):
        assert chunk.ordinal == i
        assert text[chunk.char_start : chunk.char_end] == chunk.text
        assert chunk.text == chunk.text.strip() and chunk.text
        assert chunk.char_start >= previous_end  # ordered, no overlap
        assert chunk.token_count == len(chunk.text.split()) <= cap
        previous_end = chunk.char_end
        for j in range(chunk.char_start, chunk.char_end):
            covered[j] = True
    assert all(covered[i] for i, c in enumerate(text) if not c.isspace())


@given(text=st.text(max_size=400))
@settings(max_examples=200, deadline=None)
def test_any_unicode_text_round_trips(text):
    chunks = chunk_text(text, max_tokens=7)
    assert all(text[c.char_start : c.char_end] == c.text for c in chunks)
    assert "".join("".join(c.text.split()) for c in chunks) == "".join(text.split())
    assert all(c.token_count <= 7 for c in chunks)


def test_a_sentence_longer_than_the_cap_is_cut_at_the_cap():
    text = " ".join(f"mot{i}" for i in range(2500)) + "."
    chunks = chunk_text(text)
    assert [c.token_count for c in chunks] == [1000, 1000, 500]


def test_chunks_end_at_sentence_boundaries():
    sentences = [" ".join(["mot"] * 400) + "." for _ in range(5)]
    chunks = chunk_text(" ".join(sentences))
    assert [c.token_count for c in chunks] == [800, 800, 400]
    assert all(c.text.endswith(".") for c in chunks)


def test_glued_sentence_punctuation_still_ends_a_sentence_but_not_after_monsieur():
    text = "Je donne la parole.M. Ricard a la parole.M.Floquet. Messieurs, laChambre vote!Oui."
    pieces = [text[s:e] for s, e in sentence_spans(text)]
    assert pieces == [
        "Je donne la parole.", "M. Ricard a la parole.", "M.Floquet.",
        "Messieurs, laChambre vote!", "Oui.",
    ]
    plain = [text[s:e] for s, e in sentence_spans(text, split_glued=False)]
    assert len(plain) == 2


def test_abbreviations_and_initials_do_not_end_sentences():
    text = "MM. Floquet et J. Ferry, art. 3 du règlement. Adopté."
    assert [text[s:e] for s, e in sentence_spans(text)] == [
        "MM. Floquet et J. Ferry, art. 3 du règlement.", "Adopté."
    ]


def test_blank_lines_separate_headings():
    text = "PRÉSIDENCE DE M. FLOQUET\n\nLa séance est ouverte"
    assert [text[s:e] for s, e in sentence_spans(text)] == [
        "PRÉSIDENCE DE M. FLOQUET", "La séance est ouverte"
    ]
    assert re.search("FLOQUET", text)
