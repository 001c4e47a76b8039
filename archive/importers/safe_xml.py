"""Read untrusted XML files (ALTO pages, METS) without trusting them.

Every refusal is a ``RecordError`` naming the file and, where there is one, its line:

- a file over the size limit is refused from its size alone, before a byte of it is read;
- a file with a DOCTYPE is refused before its declarations are read: a first parse stops at the
  DOCTYPE (or at the root element, when there is none), so no entity is ever declared, let
  alone expanded (billion laughs), and no external entity or DTD is fetched (``file://``,
  ``http://``). That first parse is lxml's own, so every encoding is covered;
- the real parse never resolves entities, loads a DTD, touches the network or lifts libxml2's
  limits on huge documents; malformed XML is reported with the parser's line and message.

``parse_xml_file`` builds the whole tree (METS files, small); ``iter_xml_file`` streams a file's
elements (ALTO pages, up to TRACE_ALTO_MAX_FILE_BYTES), so that its reader can drop each part
once read and a page's memory stays bounded by its largest block, not its size.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from lxml import etree

from archive.importers.records import RecordError

_READ_SIZE = 64 * 1024


def _parser(**options: Any) -> etree.XMLParser:
    return etree.XMLParser(
        resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False, **options
    )


class _DoctypeFound(Exception):
    pass


class _RootReached(Exception):
    def __init__(self, tag: str) -> None:
        super().__init__(tag)
        self.tag = tag


class _PrologTarget:
    """Parser events of the prolog only: a DOCTYPE or the root element stops the parse."""

    def doctype(self, name: str, public_id: str | None, system_url: str | None) -> None:
        raise _DoctypeFound(name)

    def start(self, tag: str, attrib: object, nsmap: object = None) -> None:
        raise _RootReached(tag)

    def end(self, tag: str) -> None:
        pass

    def data(self, text: str) -> None:
        pass

    def close(self) -> None:
        return None


def _doctype_refusal(shown: str, head: bytes) -> RecordError:
    at = head.find(b"<!DOCTYPE")
    line = head.count(b"\n", 0, at) + 1 if at >= 0 else 1
    return RecordError(line, f"{shown}: a DOCTYPE declaration is refused (no DTD, no entities: "
                             "entity expansion and external entities are not accepted)")


def _prolog_root(chunks: Iterable[bytes], shown: str) -> str | None:
    """Feed ``chunks`` until the root element starts; return its tag (None if never reached).

    Raises a ``RecordError`` for a DOCTYPE; lets ``etree.XMLSyntaxError`` through.
    """
    parser = _parser(target=_PrologTarget())
    head = b""
    try:
        for chunk in chunks:
            if len(head) < _READ_SIZE:
                head += chunk[:_READ_SIZE]
            parser.feed(chunk)
        parser.close()
    except _DoctypeFound:
        raise _doctype_refusal(shown, head) from None
    except _RootReached as root:
        return root.tag
    return None


def root_tag(path: Path) -> str | None:
    """Return the root element's tag of ``path`` (``{namespace}name``), reading only its start.

    None when the file has no readable root element before a problem (a DOCTYPE, bad XML):
    reading it whole with ``parse_xml_file`` reports that problem.
    """
    try:
        with path.open("rb") as handle:
            return _prolog_root(iter(lambda: handle.read(_READ_SIZE), b""), path.name)
    except (RecordError, etree.XMLSyntaxError, OSError):
        return None


def check_file_size(path: Path, shown: str, max_bytes: int,
                    too_big: Callable[[int], str]) -> None:
    """Refuse a file over `max_bytes` by its size alone, before a byte of it is read."""
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise RecordError(0, f"{shown}: cannot be read ({exc.strerror})") from None
    if size > max_bytes:
        raise RecordError(0, too_big(size))


def _check_size(path: Path, shown: str, max_bytes: int) -> None:
    check_file_size(path, shown, max_bytes, lambda size: (
        f"{shown} is {size:,} bytes, over the limit of {max_bytes:,} bytes "
        "for one XML file (TRACE_ALTO_MAX_FILE_BYTES); not read"))


def iter_xml_file(path: Path, shown: str, *, max_bytes: int) -> Iterator[tuple[str, Any]]:
    """Stream ``("start" | "end", element)`` events of ``path``, refusing what the module
    docstring lists (the size and the DOCTYPE before the first event, bad XML where it is met).

    The caller may clear elements it has read; the first event is the root's start.
    """
    _check_size(path, shown, max_bytes)
    try:
        with path.open("rb") as handle:
            if _prolog_root(iter(lambda: handle.read(_READ_SIZE), b""), shown) is None:
                raise RecordError(1, f"{shown}: malformed XML (no root element)")
        events = etree.iterparse(str(path), events=("start", "end"), resolve_entities=False,
                                 no_network=True, load_dtd=False, huge_tree=False)
        yield from events
    except etree.XMLSyntaxError as exc:
        raise RecordError(exc.lineno or 1, f"{shown}: malformed XML ({exc.msg})") from None
    except OSError as exc:
        raise RecordError(0, f"{shown}: cannot be read ({exc.strerror})") from None


def parse_xml_file(path: Path, shown: str, *, max_bytes: int) -> Any:
    """Parse ``path`` into its root element, refusing what the module docstring lists.

    ``shown`` names the file in messages (its path inside the imported folder).
    """
    _check_size(path, shown, max_bytes)
    data = path.read_bytes()
    try:
        if _prolog_root([data], shown) is None:
            raise RecordError(1, f"{shown}: malformed XML (no root element)")
        root = etree.fromstring(data, _parser())
    except etree.XMLSyntaxError as exc:
        line = exc.lineno or 1
        raise RecordError(line, f"{shown}: malformed XML ({exc.msg})") from None
    docinfo = root.getroottree().docinfo
    if docinfo.doctype or docinfo.internalDTD is not None:  # the prolog parse stops these first
        raise _doctype_refusal(shown, data[:_READ_SIZE])
    return root
