"""Where in a document a passage is: the page locator every citation of it carries.

A scanned document knows the page of each of its characters (`archive/layout.py`); a page
number there is the page's place in the document (an issue's page 3 is its third scan), counted
from the document's first printed page when its page field starts with one (a METS extent or
``ORDERLABEL`` "5-8": its second scan is page 6). A document without a layout has at most its
own page (or section) field. The exports (`agent/review/exports.py`) and
the viewer's citation metadata (`archive/citation_meta.py`) both cite through `page_locator`,
so a source cites the same pages wherever it is saved from.
"""

from __future__ import annotations

from archive.layout import page_range


def page_locator(document, start: int | None, end: int | None) -> str:
    """The pages a passage is printed on ("3", "3-4"), else the document's own page or section."""
    if document is None:
        return ""
    if start is not None and end is not None and getattr(document, "layout", None):
        layout = document.document_layout()
        pages = page_range(layout, start, end) if layout is not None else None
        if pages is not None:
            opening, _ = page_bounds(getattr(document, "page", "") or "")
            shift = int(opening) - 1 if opening.isdigit() else 0
            first, last = pages[0] + shift, pages[1] + shift
            return str(first) if first == last else f"{first}-{last}"
    return getattr(document, "page", "") or ""


def page_bounds(page: str) -> tuple[str, str]:
    """Split a locator into its first and last page ("3-4" → "3", "4"; "12" → "12", "")."""
    first, dash, last = page.partition("-")
    if dash and first.strip().isdigit() and last.strip().isdigit():
        return first.strip(), last.strip()
    return page, ""
