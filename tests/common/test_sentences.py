"""One sentence splitter: its evidence rules split exactly as the evidence splitter it replaced."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from common.sentences import CAPITAL_AFTER, OCR_TEXT, sentence_spans

# The verdict evidence's own splitter before it moved here, kept as the reference to agree with.
_END = re.compile(r"[.!?…]+(?:\s?[»\"')\]])*(?=\s+[«\"(—–-]?\s*[A-ZÀ-ÖØ-Þ0-9])")
_PARAGRAPH = re.compile(r"\n\s*\n")
_NOT_AN_END = re.compile(r"(?:\b(?:MM?|Mme|Mlle|Mgr|St|Ste|art|Art|cf|etc|No|no|p)|\b[A-Z])$")


def reference_evidence_sentences(text: str) -> list[tuple[int, int]]:
    cuts = {0, len(text)}
    for match in _PARAGRAPH.finditer(text):
        cuts.add(match.end())
    for match in _END.finditer(text):
        if not _NOT_AN_END.search(text, max(0, match.start() - 6), match.start()):
            cuts.add(match.end())
    bounds = sorted(cuts)
    spans = []
    for a, b in zip(bounds, bounds[1:], strict=False):
        while a < b and text[a].isspace():
            a += 1
        while b > a and text[b - 1].isspace():
            b -= 1
        if b > a:
            spans.append((a, b))
    return spans


PIECES = ["M.", "MM.", "Mme.", "art.", "J.", "p.", "etc.", "No.", ".", "!", "?", "…", "»", "«",
          '"', ")", "(", "—", "-", " ", "  ", "\n", "\n\n", "\n \n", "\t", "Le", "la", "séance",
          "Ferry", "Élu", "1887", "3", "é", "x", "parole.M", "vote!Oui", "”", "'", "]", ";", ","]
texts = st.lists(st.sampled_from(PIECES), max_size=40).map("".join)


@settings(max_examples=2000, deadline=None)
@given(texts)
def test_the_evidence_rules_split_as_the_evidence_splitter_did(text):
    assert sentence_spans(text, rules=CAPITAL_AFTER) == reference_evidence_sentences(text)


@settings(max_examples=500, deadline=None)
@given(texts, st.booleans())
def test_every_span_is_stripped_non_empty_and_in_order(text, glued):
    for rules in (OCR_TEXT, CAPITAL_AFTER):
        spans = sentence_spans(text, split_glued=glued, rules=rules)
        assert all(text[a:b] == text[a:b].strip() != "" for a, b in spans)
        assert all(b1 <= a2 for (_, b1), (a2, _) in zip(spans, spans[1:], strict=False))


CASES = [
    # (text, rules, the sentences)
    ("MM. Floquet et J. Ferry, art. 3 du règlement. Adopté.", OCR_TEXT,
     ["MM. Floquet et J. Ferry, art. 3 du règlement.", "Adopté."]),
    ("Je donne la parole.M. Ricard a la parole.", OCR_TEXT,
     ["Je donne la parole.", "M. Ricard a la parole."]),
    ("PRÉSIDENCE DE M. FLOQUET\n\nLa séance est ouverte", OCR_TEXT,
     ["PRÉSIDENCE DE M. FLOQUET", "La séance est ouverte"]),
    ("  Première phrase. Deuxième phrase ! Troisième ? Quatrième phrase.", OCR_TEXT,
     ["Première phrase.", "Deuxième phrase !", "Troisième ?", "Quatrième phrase."]),
    ("Il a dit non. et puis oui. M. Lejeune parle.", CAPITAL_AFTER,
     ["Il a dit non. et puis oui.", "M. Lejeune parle."]),
    ("Vote « Oui. » Puis 1887 vient.", CAPITAL_AFTER, ["Vote « Oui. »", "Puis 1887 vient."]),
]


def test_the_sentences_the_callers_rely_on():
    for text, rules, expected in CASES:
        assert [text[a:b] for a, b in sentence_spans(text, rules=rules)] == expected, text
