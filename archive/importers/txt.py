"""Importer for a folder of .txt files, with an optional CSV of per-file metadata.

The CSV's columns are those of ``metadata_csv``. Files without a CSV row go to a sub-corpus
named after the folder. Only regular files are read: a symbolic link is refused with its name
(``folder_files``).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from archive.importers.folder_files import regular_files
from archive.importers.metadata_csv import read_metadata_csv, row_sub_corpus
from archive.importers.records import (
    DocumentRecord,
    RecordError,
    dated_title,
    iiif_value,
    parse_date,
    slug_for,
)


def read_txt_folder(
    folder: Path, metadata_csv: Path | None
) -> Iterator[DocumentRecord | RecordError]:
    """Yield one record per .txt file; errors carry the CSV line (or 0 for a file problem)."""
    meta: dict[str, tuple[int, dict]] = {}
    csv_name = metadata_csv.name if metadata_csv else ""
    if metadata_csv:
        meta, errors = read_metadata_csv(metadata_csv)
        yield from errors
    default_slug = slug_for(folder.resolve().name)
    files, refused = regular_files(folder, ".txt")
    yield from refused
    known = {f.name for f in files}
    for name, (line, _) in meta.items():
        if name not in known:
            yield RecordError(line, f"{csv_name}: no file {name} in the folder")
    for file in files:
        line, row = meta.get(file.name, (0, {}))
        where = f"{file.name}" + (f" (CSV line {line})" if line else "")
        try:
            text = file.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            yield RecordError(line, f"{where}: not UTF-8 text")
            continue
        if not text.strip():
            yield RecordError(line, f"{where}: empty file")
            continue
        try:
            date, precision = parse_date(row.get("date"), line)
        except RecordError as exc:
            yield RecordError(line, f"{where}: {exc.message}")
            continue
        try:
            info = row_sub_corpus(row, default_slug, line=line, where=where)
            iiif = iiif_value(row.get("iiif"), line, f"{where}: ")
        except RecordError as exc:
            yield exc
            continue
        publication = row.get("publication", "")
        yield DocumentRecord(
            line=line, sub_corpus=info, external_id=row.get("external_id") or file.stem,
            text=text, title=row.get("title") or dated_title(publication or file.stem, date,
                                                             precision),
            publication=publication, date=date, date_precision=precision,
            page=row.get("page", ""), url=row.get("url", ""), iiif_url=iiif,
            metadata={"filename": file.name},
        )
