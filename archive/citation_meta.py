"""The citation metadata of the document viewer, for reference managers' browser connectors.

Zotero's connector runs its "Embedded Metadata" translator on a page without a translator of
its own: it reads the Highwire Press ``<meta name="citation_…" content="…">`` tags of the
page's ``<head>`` (``citation_title`` → title, ``citation_date`` → date,
``citation_journal_title`` → publication and the journal-article type,
``citation_publisher``, ``citation_firstpage`` / ``citation_lastpage`` → pages,
``citation_public_url`` → URL, ``citation_abstract`` → abstract, ``citation_keywords`` → tags).
Mendeley and Google Scholar read the same tags. The pages are those of the highlighted passage
(`archive/locators.py`, as in every export); the URL is the document's own (an http(s) address,
or an ark or DOI through its resolver), else the viewer's address of the passage.

The values are plain text; the template escapes them into the attributes.
"""

from __future__ import annotations

from archive.locators import page_bounds, page_locator
from common.links import link_target

ABSTRACT_CHARS = 2000  # the highlighted passage, cut at a word beyond this


def citation_meta(document, *, start: int | None, end: int | None,
                  viewer_url: str) -> list[tuple[str, str]]:
    """Return the (name, content) pairs of the document's Highwire citation tags, in order."""
    tags: list[tuple[str, str]] = [("citation_title", document.title or document.external_id)]
    if document.date is not None:
        precision = {"year": 4, "month": 7}.get(document.date_precision, 10)
        tags.append(("citation_date", document.date.isoformat()[:precision]))
    if document.publication:
        if document.sub_corpus.genre == "press":
            tags.append(("citation_journal_title", document.publication))
        else:
            tags.append(("citation_publisher", document.publication))
    first, last = page_bounds(page_locator(document, start, end))
    if first:
        tags.append(("citation_firstpage", first))
    if last:
        tags.append(("citation_lastpage", last))
    tags.append(("citation_public_url", link_target(document.url) or viewer_url))
    if start is not None and end is not None and start < end:
        tags.append(("citation_abstract", _passage(document.text[start:end])))
    tags.append(("citation_keywords", document.sub_corpus.name))
    return [(name, " ".join(value.split())) for name, value in tags if value and value.strip()]


def _passage(text: str) -> str:
    text = " ".join(text.split())
    if len(text) <= ABSTRACT_CHARS:
        return text
    cut = text[:ABSTRACT_CHARS].rfind(" ")
    return text[:cut if cut > ABSTRACT_CHARS // 2 else ABSTRACT_CHARS] + " …"
