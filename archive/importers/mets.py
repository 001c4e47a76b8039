"""Read a METS file: the ALTO pages of one document, in order, with its MODS title and date.

- Pages: the ``fileSec`` files whose ``FLocat xlink:href`` names an ``.xml`` file (images and
  other files are not read; those named by a local path are kept as ``others``, which the
  importer refuses outside the folder), ordered as the ``PHYSICAL`` ``structMap`` orders the divs
  pointing at them (by ``ORDER`` when every such div has a whole number there, else in file
  order); files the map does not reach follow in ``fileSec`` order.
- Page images: a file of a ``fileGrp`` whose ``USE`` is ``IIIF`` is the IIIF Image API base of
  the page whose ``PHYSICAL`` div points at it (a trailing ``/info.json`` is dropped); it is
  checked where the page is read (``archive/iiif.py``), never fetched.
- Description: the first MODS record (``dmdSec``) with a ``titleInfo/title`` or an
  ``originInfo/dateIssued``; the external id is the METS ``OBJID``, else the file's stem. Its
  ``relatedItem type="host"`` title is the publication (the record's own title then titles the
  document as it is), its ``part/extent unit="pages"`` (``start``, ``end``) the pages; without
  an extent, the ``ORDERLABEL`` of the first and last pages of the ``PHYSICAL`` map, when both
  are whole numbers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from archive.importers.alto_page import split_tag
from archive.importers.records import RecordError
from archive.importers.safe_xml import parse_xml_file

METS = "http://www.loc.gov/METS/"
MODS = "http://www.loc.gov/mods/v3"
XLINK = "http://www.w3.org/1999/xlink"
METS_ROOT = f"{{{METS}}}mets"

# A W3C date, with the time of day a producer may add: only the date is kept.
_SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*:")
_ISSUED = re.compile(r"^\s*(\d{4}(?:-\d{1,2}(?:-\d{1,2})?)?)(?:T[\d:.+\-Z]*)?\s*$")


@dataclass(frozen=True)
class PageReference:
    href: str
    line: int  # of its FLocat in the METS file
    image: str = ""  # the page's IIIF Image API base, unchecked, when a IIIF file names it
    image_line: int = 0


@dataclass
class MetsDocument:
    external_id: str
    title: str = ""
    date: str = ""  # YYYY, YYYY-MM or YYYY-MM-DD
    date_line: int = 0
    publication: str = ""  # the host's title (relatedItem type="host"), when the MODS has one
    pages_label: str = ""  # "5" or "5-8": the printed pages, from the MODS extent or ORDERLABELs
    pages: list[PageReference] = field(default_factory=list)
    # The other local references (a path or a file: URL, not a page): never read, only checked.
    others: list[PageReference] = field(default_factory=list)


def _m(name: str) -> str:
    return f"{{{METS}}}{name}"


def _mods(name: str) -> str:
    return f"{{{MODS}}}{name}"


def read_mets(path: Path, shown: str, *, max_bytes: int) -> MetsDocument:
    """Parse the METS file at ``path`` (named ``shown`` in messages)."""
    root = parse_xml_file(path, shown, max_bytes=max_bytes)
    if root.tag != METS_ROOT:
        namespace, name = split_tag(root.tag)
        raise RecordError(root.sourceline or 1, f"{shown}: named like a METS file, but its root "
                                                f"is <{name}> in namespace {namespace or 'none'}, "
                                                f"not <mets> in {METS}")
    document = MetsDocument(external_id=(root.get("OBJID") or "").strip() or path.stem)
    _describe(root, document, shown)
    files: dict[str, PageReference] = {}
    for file in root.iter(_m("file")):
        location = file.find(_m("FLocat"))
        href = location.get(f"{{{XLINK}}}href") if location is not None else None
        if href and href.lower().split("?")[0].endswith(".xml"):
            files[file.get("ID") or f"#{len(files)}"] = PageReference(
                href, location.sourceline or 0)
        elif href and _is_local(href):
            document.others.append(PageReference(href, location.sourceline or 0))
    images = _page_images(root, set(files))
    files = {i: replace(reference, image=images[i][0], image_line=images[i][1])
             if i in images else reference for i, reference in files.items()}
    ordered, labels = _physical_order(root, set(files))
    if not document.pages_label and labels and labels[0].isdigit() and labels[-1].isdigit():
        first, last = labels[0], labels[-1]
        document.pages_label = first if first == last else f"{first}-{last}"
    document.pages = [files[i] for i in ordered] + [
        reference for i, reference in files.items() if i not in set(ordered)
    ]
    if not document.pages:
        raise RecordError(root.sourceline or 1, f"{shown}: its fileSec lists no .xml (ALTO) file")
    return document


def _is_local(href: str) -> bool:
    """A path or a ``file:`` URL (any other scheme names something never fetched)."""
    href = href.strip().lower()
    return href.startswith("file:") or not _SCHEME.match(href)


def _describe(root: Any, document: MetsDocument, shown: str) -> None:
    for mods in root.iter(_mods("mods")):
        title = mods.find(f"{_mods('titleInfo')}/{_mods('title')}")
        issued = mods.find(f"{_mods('originInfo')}/{_mods('dateIssued')}")
        if title is None and issued is None:
            continue
        document.title = " ".join((title.text or "").split()) if title is not None else ""
        host = next((item for item in mods.iter(_mods("relatedItem"))
                     if (item.get("type") or "") == "host"), None)
        host_title = (host.find(f"{_mods('titleInfo')}/{_mods('title')}")
                      if host is not None else None)
        if host_title is not None:
            document.publication = " ".join((host_title.text or "").split())
        for extent in mods.iter(_mods("extent")):
            if (extent.get("unit") or "").lower() not in ("pages", "page"):
                continue
            start = " ".join((extent.findtext(_mods("start")) or "").split())
            end = " ".join((extent.findtext(_mods("end")) or "").split())
            document.pages_label = "-".join(p for p in (start, end) if p)[:100]
            break
        if issued is not None and (issued.text or "").strip():
            match = _ISSUED.match(issued.text)
            if not match:
                raise RecordError(issued.sourceline or 0, (
                    f"{shown}: unparsable mods:dateIssued {issued.text.strip()!r} "
                    "(expected YYYY, YYYY-MM or YYYY-MM-DD)"))
            document.date, document.date_line = match.group(1), issued.sourceline or 0
        return


def _page_images(root: Any, alto_ids: set[str]) -> dict[str, tuple[str, int]]:
    """Map ALTO file id -> (IIIF href, its line) through the PHYSICAL divs pointing at both."""
    iiif: dict[str, tuple[str, int]] = {}
    for group in root.iter(_m("fileGrp")):
        if (group.get("USE") or "").strip().upper() != "IIIF":
            continue
        for file in group.iter(_m("file")):
            location = file.find(_m("FLocat"))
            href = (location.get(f"{{{XLINK}}}href") or "").strip() if location is not None else ""
            if href and file.get("ID"):
                href = href.removesuffix("/info.json")
                iiif[file.get("ID")] = (href, location.sourceline or 0)
    images: dict[str, tuple[str, int]] = {}
    if not iiif:
        return images
    for div in root.iter(_m("div")):
        pointed = [fptr.get("FILEID") for fptr in div.findall(_m("fptr"))]
        image = next((iiif[i] for i in pointed if i in iiif), None)
        if image is not None:
            images.update({i: image for i in pointed if i in alto_ids and i not in images})
    return images


def _physical_order(root: Any, alto_ids: set[str]) -> tuple[list[str], list[str]]:
    """Return the ALTO file ids in the order the PHYSICAL structMap gives their pages, and the
    pages' ``ORDERLABEL``s in that order ("" where a page has none)."""
    physical = next((s for s in root.iter(_m("structMap"))
                     if (s.get("TYPE") or "").upper() == "PHYSICAL"), None)
    if physical is None:
        return [], []
    pages: list[tuple[str | None, list[str]]] = []
    labels: dict[str, str] = {}
    for div in physical.iter(_m("div")):
        ids = [
            pointer.get("FILEID") for fptr in div.findall(_m("fptr"))
            for pointer in (fptr, *fptr.iter(_m("area")))
            if pointer.get("FILEID") in alto_ids
        ]
        if ids:
            pages.append((div.get("ORDER"), ids))
            labels.setdefault(ids[0], (div.get("ORDERLABEL") or "").strip())
    if pages and all(order and order.strip().isdigit() for order, _ in pages):
        pages.sort(key=lambda page: int(page[0] or 0))  # stable: equal orders keep file order
    seen: dict[str, None] = {}
    for _, ids in pages:
        seen.update(dict.fromkeys(i for i in ids if i not in seen))
    ordered = list(seen)
    return ordered, [labels[i] for i in ordered if i in labels]
