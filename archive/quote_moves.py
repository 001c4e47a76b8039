"""The quotes one click away from the one the viewer highlights: a sentence earlier or later, one
more sentence before or after, one fewer at either end.

Sentences are split with the rule set verdict evidence is split with (`CAPITAL_AFTER`), so a
quote the historian adjusts is cut where the agent's evidence is cut.
"""

from __future__ import annotations

from dataclasses import dataclass

from archive.highlight import Span
from common.sentences import CAPITAL_AFTER, sentence_spans

QUOTE_MAX_SENTENCES = 6  # the viewer offers no longer quote


@dataclass(frozen=True)
class QuoteMoves:
    earlier: Span | None = None  # the sentence before the quote, alone
    later: Span | None = None  # the sentence after the quote, alone
    add_before: Span | None = None
    add_after: Span | None = None
    drop_first: Span | None = None
    drop_last: Span | None = None


def quote_moves(text: str, span: Span) -> QuoteMoves:
    """Return the quotes next to `span` (None where there is none)."""
    sentences = sentence_spans(text, rules=CAPITAL_AFTER)
    inside = [i for i, (start, end) in enumerate(sentences)
              if start < span.end and end > span.start]
    if not inside:
        return QuoteMoves()
    first, last = inside[0], inside[-1]
    before = sentences[first - 1] if first > 0 else None
    after = sentences[last + 1] if last + 1 < len(sentences) else None
    room = last - first + 1 < QUOTE_MAX_SENTENCES
    start, end = sentences[first][0], sentences[last][1]
    return QuoteMoves(
        earlier=Span(*before) if before else None,
        later=Span(*after) if after else None,
        add_before=Span(before[0], end) if before and room else None,
        add_after=Span(start, after[1]) if after and room else None,
        drop_first=Span(sentences[first + 1][0], end) if last > first else None,
        drop_last=Span(start, sentences[last - 1][1]) if last > first else None,
    )
