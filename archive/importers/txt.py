"""Importer for a folder of .txt files, with an optional CSV of per-file metadata.

CSV columns (all optional but ``filename``): filename, title, date (YYYY, YYYY-MM or
YYYY-MM-DD), sub_corpus, sub_corpus_name, genre, publication, page, url, external_id.
Files without a CSV row go to a sub-corpus named after the folder.
"""

from __future__ import annotations

import csv
from collections.abc import Iterator
from pathlib import Path

from archive.importers.records import (
    DEFAULT_LANGUAGE,
    DocumentRecord,
    RecordError,
    parse_date,
    slug_for,
    sub_corpus_info,
)
from common.french_dates import format_french_date
from common.search import SubCorpusInfo

_GENRES = {"press", "debates", "other"}


def _read_csv(path: Path) -> tuple[dict[str, tuple[int, dict]], list[RecordError]]:
    rows: dict[str, tuple[int, dict]] = {}
    errors: list[RecordError] = []
    with path.open(encoding="utf-8-sig", newline="") as handle:
        reader = csv.DictReader(handle)
        if not reader.fieldnames or "filename" not in reader.fieldnames:
            return rows, [RecordError(1, f"{path.name}: the CSV needs a 'filename' column")]
        for row in reader:
            line = reader.line_num
            name = (row.get("filename") or "").strip()
            if not name:
                errors.append(RecordError(line, f"{path.name}: missing filename"))
            elif name in rows:
                errors.append(RecordError(line, f"{path.name}: {name} listed twice"))
            else:
                rows[name] = (line, {k: (v or "").strip() for k, v in row.items() if k})
    return rows, errors


def read_txt_folder(
    folder: Path, metadata_csv: Path | None
) -> Iterator[DocumentRecord | RecordError]:
    """Yield one record per .txt file; errors carry the CSV line (or 0 for a file problem)."""
    meta: dict[str, tuple[int, dict]] = {}
    csv_name = metadata_csv.name if metadata_csv else ""
    if metadata_csv:
        meta, errors = _read_csv(metadata_csv)
        yield from errors
    default_slug = slug_for(folder.resolve().name)
    files = sorted(folder.glob("*.txt"))
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
        genre = row.get("genre") or None
        if genre and genre not in _GENRES:
            yield RecordError(line, f"{where}: genre must be one of {sorted(_GENRES)}")
            continue
        slug = slug_for(row["sub_corpus"]) if row.get("sub_corpus") else default_slug
        info = sub_corpus_info(slug, row.get("sub_corpus_name", ""), genre)
        if row.get("sub_corpus_name") and info.name != row["sub_corpus_name"]:
            info = SubCorpusInfo(
                slug, row["sub_corpus_name"], info.genre, language=DEFAULT_LANGUAGE
            )
        publication = row.get("publication", "")
        title = row.get("title") or ", ".join(
            p for p in (publication or file.stem, format_french_date(date, precision)) if p
        )
        yield DocumentRecord(
            line=line, sub_corpus=info, external_id=row.get("external_id") or file.stem,
            text=text, title=title, publication=publication, date=date,
            date_precision=precision, page=row.get("page", ""), url=row.get("url", ""),
            metadata={"filename": file.name},
        )
