"""Importer for a folder of ALTO files, one per scanned page, grouped into documents.

The pages of a document (a newspaper issue, a sitting) are grouped, in this order:

1. by the METS files of the folder (any ``.xml`` whose root is ``mets:mets``, and any
   ``*mets*.xml`` whose root is not ALTO's; see ``mets``): one document per METS file, its
   pages where its ``FLocat`` hrefs point (inside the folder only), titled and dated by its
   MODS record. Every other ``.xml`` file of the folder must be a page of one of them. A local
   reference that is not a page (an image file) must lie inside the folder too: a METS file
   naming ``../../etc/passwd`` or ``file:///etc/passwd`` is refused with the reference named;
2. else by the metadata CSV (``metadata_csv``), when given: the rows sharing a value in the
   ``issue`` column are one document, its pages ordered by ``page`` (a whole number) then file
   name, described by the other columns (a column's non-empty values must agree). A row without
   an issue, and a file without a row, is a document of its own, as in a .txt folder;
3. else every ALTO file is a document of its own, in a sub-corpus named after the folder.

Where the METS or the CSV say nothing, the command line's ``FolderOptions`` do: the
sub-corpus (instead of the folder's name), its genre, the name documents are titled by, and a
IIIF manifest file naming the pages' images (``iiif_manifest``: a canvas naming an ALTO file is
that page's; else, in a one-document folder with as many canvases as pages, by position).

Only regular files inside the folder are read (``folder_files``): a symbolic link among the
pages, or on the way to a page a METS file names, is refused with its name. Pages are read one at
a time (``alto_page``); a document with a refused page is refused whole, each bad page reported
with its file and line.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath
from urllib.parse import unquote

from archive.importers.alto_page import is_alto_root, read_alto_page
from archive.importers.alto_text import AltoTextBuilder
from archive.importers.folder_files import inside, regular_files
from archive.importers.iiif_manifest import ManifestCanvas, read_manifest
from archive.importers.metadata_csv import read_metadata_csv, row_sub_corpus
from archive.importers.mets import METS_ROOT, PageReference, read_mets
from archive.importers.records import (
    DocumentRecord,
    FolderOptions,
    RecordError,
    dated_title,
    iiif_value,
    parse_date,
    slug_for,
)
from archive.importers.safe_xml import root_tag

# The CSV columns that describe an issue as a whole (``page`` orders its pages instead).
_ISSUE_COLUMNS = ("title", "date", "sub_corpus", "sub_corpus_name", "genre", "publication",
                  "url", "external_id")
_URL_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


@dataclass(frozen=True)
class PageFile:
    path: Path
    shown: str  # its path inside the imported folder: how messages and the layout name it
    image: str = ""  # its IIIF Image API base (the CSV's iiif column), checked


def xml_files(folder: Path) -> list[Path]:
    """The regular ``.xml`` files directly inside ``folder``, by name (links left out)."""
    return regular_files(folder, ".xml")[0]


def is_mets_file(path: Path) -> bool:
    """A METS file: its root is ``mets:mets``, or it is named so and its root is not ALTO's."""
    tag = root_tag(path)
    return tag == METS_ROOT or ("mets" in path.name.lower() and not is_alto_root(tag))


def read_alto_folder(
    folder: Path, metadata_csv: Path | None, *, max_file_bytes: int,
    defaults: FolderOptions | None = None,
) -> Iterator[DocumentRecord | RecordError]:
    """Yield one record per document of ``folder`` (see the module docstring), or its errors."""
    defaults = defaults or FolderOptions()
    default_slug = slug_for(defaults.sub_corpus or folder.resolve().name)
    fallback = _fallback_row(defaults)
    files, refused = regular_files(folder, ".xml")
    yield from refused
    mets = [f for f in files if is_mets_file(f)]
    planned: Iterable[tuple[DocumentRecord, list[PageFile]] | RecordError]
    if mets:
        if metadata_csv:
            yield RecordError(1, f"{metadata_csv.name}: the folder has METS files ({mets[0].name}"
                                 f"{', …' if len(mets) > 1 else ''}), which group and describe "
                                 "its pages; a metadata CSV is not read with them")
            return
        loose = [f for f in files if f not in mets]
        planned = _mets_documents(folder, mets, loose, default_slug, max_file_bytes, fallback)
    elif metadata_csv:
        planned = _csv_documents(files, metadata_csv, default_slug, fallback)
    else:
        planned = (_own_document(f, 0, fallback, default_slug, f.name) for f in files)
    if defaults.iiif_manifest is not None:
        try:
            canvases = read_manifest(defaults.iiif_manifest)
        except RecordError as exc:
            yield exc
            return
        planned = _with_manifest(list(planned), canvases, defaults.iiif_manifest.name)
    for item in planned:
        if isinstance(item, RecordError):
            yield item
        else:
            yield from _with_text(*item, max_file_bytes=max_file_bytes)


def _with_manifest(planned: list[tuple[DocumentRecord, list[PageFile]] | RecordError],
                   canvases: list[ManifestCanvas], name: str
                   ) -> list[tuple[DocumentRecord, list[PageFile]] | RecordError]:
    """Give the pages without an image the image of their canvas (see the module docstring)."""
    by_alto = {canvas.alto: canvas for canvas in canvases if canvas.alto}
    documents = [item for item in planned if not isinstance(item, RecordError)]
    if not by_alto:
        pages = documents[0][1] if len(documents) == 1 else []
        if len(documents) != 1 or len(pages) != len(canvases):
            count = sum(len(p) for _, p in documents)
            return [*planned, RecordError(0, (
                f"{name}: its {len(canvases)} canvases name no ALTO file (seeAlso), so they "
                f"are matched by position, which needs one document of as many pages; the "
                f"folder has {len(documents)} document(s) of {count} page(s)"))]
        by_alto = {PurePosixPath(page.shown).name: canvas
                   for page, canvas in zip(pages, canvases, strict=True)}
    return [item if isinstance(item, RecordError) else (item[0], [
        page if page.image or PurePosixPath(page.shown).name not in by_alto
        else replace(page, image=by_alto[PurePosixPath(page.shown).name].image)
        for page in item[1]]) for item in planned]


def _with_text(record: DocumentRecord, pages: list[PageFile], *, max_file_bytes: int
               ) -> Iterator[DocumentRecord | RecordError]:
    """Read the pages of ``record`` in order into its text and layout, or yield their errors."""
    text = AltoTextBuilder()
    errors: list[RecordError] = []
    for page in pages:
        try:
            read_alto_page(page.path, page.shown, max_bytes=max_file_bytes, text=text)
        except RecordError as exc:
            errors.append(exc)
    if errors:
        yield from errors
        return
    record.text, layout = text.result()
    record.layout = replace(layout, pages=tuple(
        replace(page, image=file.image) if file.image else page
        for page, file in zip(layout.pages, pages, strict=True)))
    if not record.text.strip():
        names = ", ".join(p.shown for p in pages)
        yield RecordError(record.line, f"{names}: no text (no String with CONTENT) in "
                                       f"{'this page' if len(pages) == 1 else 'these pages'}")
        return
    yield record


def _fallback_row(defaults: FolderOptions) -> dict[str, str]:
    """The command line's defaults as the CSV columns they stand in for (empty ones left out)."""
    row = {"sub_corpus_name": defaults.sub_corpus, "genre": defaults.genre,
           "default_title": defaults.title}
    return {column: value for column, value in row.items() if value}


def _with_fallback(row: dict, fallback: dict[str, str]) -> dict:
    """A CSV row completed by the command line's defaults where its cells are empty."""
    given = {column: value for column, value in row.items() if value}
    if "sub_corpus" in given:  # a row naming its sub-corpus keeps that sub-corpus's name
        fallback = {c: v for c, v in fallback.items() if c != "sub_corpus_name"}
    return {**fallback, **given}


def _mets_documents(
    folder: Path, mets: list[Path], loose: list[Path], default_slug: str, max_file_bytes: int,
    fallback: dict[str, str],
) -> Iterator[tuple[DocumentRecord, list[PageFile]] | RecordError]:
    root = folder.resolve()
    listed_by: dict[Path, str] = {}
    for mets_file in mets:
        try:
            described = read_mets(mets_file, mets_file.name, max_bytes=max_file_bytes)
            date, precision = parse_date(described.date, described.date_line)
        except RecordError as exc:
            yield _named(exc, mets_file.name)
            continue
        pages: list[PageFile] = []
        problems: list[RecordError] = []
        for other in described.others:
            try:
                _local_path(root, mets_file, other)
            except RecordError as exc:
                problems.append(exc)
        for reference in described.pages:
            try:
                path = _page_path(root, mets_file, reference)
            except RecordError as exc:
                problems.append(exc)
                continue
            shown = path.relative_to(root).as_posix()
            try:
                image = iiif_value(reference.image, reference.image_line,
                                   f"{mets_file.name}: image of {shown}: ")
            except RecordError as exc:
                problems.append(exc)
                continue
            if path in listed_by:
                problems.append(RecordError(reference.line, f"{mets_file.name}: {shown} is "
                                                            f"already a page of {listed_by[path]}"))
                continue
            listed_by[path] = mets_file.name
            pages.append(PageFile(path, shown, image))
        if problems:
            yield from problems
            continue
        publication = described.publication or described.title
        name = described.title or fallback.get("default_title") or described.external_id
        yield DocumentRecord(
            line=0, sub_corpus=row_sub_corpus(fallback, default_slug, line=0,
                                              where=mets_file.name),
            external_id=described.external_id, text="",
            title=name if described.title and described.publication else dated_title(
                name, date, precision),
            publication=publication, date=date, date_precision=precision,
            page=described.pages_label,
            metadata={"filename": mets_file.name},
        ), pages
    for page in loose:
        if page.resolve() not in listed_by:
            yield RecordError(0, f"{page.name}: no METS file of the folder lists this page "
                                 "(with METS files, every page belongs to one)")


def _named(error: RecordError, name: str) -> RecordError:
    """Prefix ``error`` with the file it is about, unless it names it already."""
    if error.message.startswith(name):
        return error
    return RecordError(error.line, f"{name}: {error.message}")


def _local_path(root: Path, mets_file: Path, reference: PageReference, *,
                what: str = "file") -> Path:
    """Resolve a local ``FLocat`` href to a path inside the imported folder, through no link."""
    href = reference.href.strip()
    for prefix in ("file://", "file:"):
        if href.lower().startswith(prefix):
            href = href[len(prefix):]
            break
    else:
        if _URL_SCHEME.match(href):
            raise RecordError(reference.line, f"{mets_file.name}: {what} {reference.href!r} is "
                                              "not a file of the imported folder")
    try:
        return inside(root, mets_file.parent.resolve(), unquote(href))
    except ValueError as exc:
        raise RecordError(reference.line, f"{mets_file.name}: {what} {reference.href!r} is "
                                          f"{exc}; refused, nothing read") from None


def _page_path(root: Path, mets_file: Path, reference: PageReference) -> Path:
    """Resolve an ``FLocat`` href to a regular file inside the imported folder, or refuse it."""
    path = _local_path(root, mets_file, reference, what="page")
    if not path.is_file():
        raise RecordError(reference.line, f"{mets_file.name}: page {reference.href!r} is not "
                                          "in the folder")
    return path


def _csv_documents(
    files: list[Path], metadata_csv: Path, default_slug: str, fallback: dict[str, str]
) -> Iterator[tuple[DocumentRecord, list[PageFile]] | RecordError]:
    rows, errors = read_metadata_csv(metadata_csv)
    yield from errors
    csv_name = metadata_csv.name
    known = {f.name for f in files}
    for name, (line, _) in rows.items():
        if name not in known:
            yield RecordError(line, f"{csv_name}: no file {name} in the folder")
    issues: dict[str, list[tuple[int, dict, Path]]] = {}
    for file in files:
        line, row = rows.get(file.name, (0, {}))
        if row.get("issue"):
            issues.setdefault(row["issue"], []).append((line, row, file))
    for file in files:  # documents come in the order of their first file
        line, row = rows.get(file.name, (0, {}))
        issue = row.get("issue")
        if not issue:
            yield _own_document(file, line, _with_fallback(row, fallback), default_slug,
                                file.name + (f" (CSV line {line})" if line else ""))
        elif issues[issue][0][2] == file:
            yield _issue_document(issue, issues[issue], csv_name, default_slug, fallback)


def _own_document(file: Path, line: int, row: dict, default_slug: str, where: str
                  ) -> tuple[DocumentRecord, list[PageFile]] | RecordError:
    """One page, one document, described by its CSV row if it has one."""
    try:
        record = _described(row, line, where, default_slug, default_id=file.stem)
        image = iiif_value(row.get("iiif"), line, f"{where}: ")
    except RecordError as exc:
        return exc
    if not row.get("title") and row.get("default_title"):
        record.title = f"{record.title} ({file.stem})"  # one page of many: its file tells it
    record.page = row.get("page", "")
    record.metadata = {"filename": file.name}
    return record, [PageFile(file, file.name, image)]


def _issue_document(issue: str, rows: list[tuple[int, dict, Path]], csv_name: str,
                    default_slug: str, fallback: dict[str, str]
                    ) -> tuple[DocumentRecord, list[PageFile]] | RecordError:
    """The pages of one issue, in order, described by their rows' agreeing columns."""
    ordered = []
    images: dict[Path, str] = {}
    for line, row, file in rows:
        page = row.get("page", "")
        if page and not page.isdigit():
            return RecordError(line, f"{csv_name}: issue {issue!r}: page {page!r} of {file.name} "
                                     "is not a whole number (it orders the issue's pages)")
        try:
            images[file] = iiif_value(row.get("iiif"), line, f"{csv_name}: {file.name}: ")
        except RecordError as exc:
            return exc
        ordered.append(((0, int(page)) if page else (1, 0), file.name, line, row, file))
    ordered.sort(key=lambda page: page[:2])
    described: dict[str, str] = {}
    first_line: dict[str, int] = {}
    for _, _, line, row, _ in ordered:
        for column in _ISSUE_COLUMNS:
            value = row.get(column, "")
            if not value:
                continue
            if column in described and described[column] != value:
                return RecordError(line, (
                    f"{csv_name}: issue {issue!r}: {column} {value!r} differs from "
                    f"{described[column]!r} (line {first_line[column]}); the pages of one "
                    "issue describe one document"))
            described.setdefault(column, value)
            first_line.setdefault(column, line)
    line = min(line for line, _, _ in rows)
    try:
        record = _described(_with_fallback(described, fallback), line,
                            f"issue {issue} (CSV line {line})", default_slug, default_id=issue)
    except RecordError as exc:
        return exc
    record.metadata = {"issue": issue}
    return record, [PageFile(file, file.name, images[file]) for *_, file in ordered]


def _described(row: dict, line: int, where: str, default_slug: str, *, default_id: str
               ) -> DocumentRecord:
    """A document described by CSV values (none: named after its file), without its text."""
    try:
        date, precision = parse_date(row.get("date"), line)
    except RecordError as exc:
        raise RecordError(line, f"{where}: {exc.message}") from None
    info = row_sub_corpus(row, default_slug, line=line, where=where)
    publication = row.get("publication", "")
    return DocumentRecord(
        line=line, sub_corpus=info, external_id=row.get("external_id") or default_id, text="",
        title=row.get("title") or dated_title(
            publication or row.get("default_title") or default_id, date, precision),
        publication=publication, date=date, date_precision=precision, url=row.get("url", ""),
    )
