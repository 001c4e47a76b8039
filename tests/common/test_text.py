"""Accent folding: each variant keeps the exact behaviour its callers were measured with."""

from __future__ import annotations

import unicodedata

from hypothesis import given
from hypothesis import strategies as st

from common.text import (
    casefold_without_accents,
    lower_keeping_positions,
    lower_without_accents,
    without_combining_marks,
)

# French OCR text, plus characters on which lower(), casefold() and NFKD disagree.
FRENCH = st.text(
    alphabet=st.sampled_from(list("aàâäbcçdeéèêëiîïoôöuùûüyÿAÀÉÈÊÎÔÙÇœŒæÆßẞİſﬁ’'- \t\n0123456789")),
    max_size=40,
)


def test_lower_without_accents_strips_accents_but_keeps_ligatures_and_sharp_s():
    assert lower_without_accents("Février, ÉTÉ, Noël") == "fevrier, ete, noel"
    assert lower_without_accents("Cœur ß") == "cœur ß"
    assert lower_without_accents("ﬁn") == "fin"  # NFKD splits compatibility ligatures


def test_casefold_without_accents_spells_out_ligatures_and_folds_sharp_s():
    assert casefold_without_accents("Cœur, ŒUVRE, Æther") == "coeur, oeuvre, aether"
    assert casefold_without_accents("Straße") == "strasse"
    assert casefold_without_accents("Député") == "depute"


def test_lower_keeping_positions_keeps_one_character_per_character():
    assert lower_keeping_positions("Élu\tà Paris") == "elu a paris"
    assert lower_keeping_positions("œuvre") == "œuvre"


@given(FRENCH)
def test_lower_keeping_positions_is_as_long_as_the_lower_cased_text(text):
    assert len(lower_keeping_positions(text)) == len(text.lower())


@given(FRENCH)
def test_folded_text_has_no_combining_marks_and_folding_twice_changes_nothing(text):
    for fold in (lower_without_accents, casefold_without_accents):
        once = fold(text)
        assert not any(unicodedata.combining(ch) for ch in once)
        assert fold(once) == once


# The implementations the callers had before the shared module, kept as oracles.
def _lower_nfkd(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text.lower())
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def _engine_fold(text: str) -> str:
    text = text.replace("œ", "oe").replace("Œ", "oe").replace("æ", "ae").replace("Æ", "ae")
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def _snippet_fold(text: str) -> str:
    return "".join(
        unicodedata.normalize("NFKD", ch)[0] if ch.strip() else " " for ch in text.lower()
    )


@given(st.one_of(FRENCH, st.text(max_size=40)))
def test_each_variant_matches_the_copy_it_replaces(text):
    assert lower_without_accents(text) == _lower_nfkd(text)
    assert casefold_without_accents(text) == _engine_fold(text)
    assert lower_keeping_positions(text) == _snippet_fold(text)
    assert without_combining_marks(text.lower()) == _lower_nfkd(text)
