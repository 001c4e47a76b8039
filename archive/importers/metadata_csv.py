"""The metadata CSV of a folder import (.txt or ALTO files): one row per file, by file name.

Columns (all optional but ``filename``): filename, title, date (YYYY, YYYY-MM or YYYY-MM-DD),
sub_corpus, sub_corpus_name, genre, publication, page, url, external_id, iiif (a IIIF Image API
base or manifest of the scan, checked by ``archive/iiif.py``); an ALTO folder also reads
``issue``, and there ``iiif`` names the image of each row's page. Files without a row go to
a sub-corpus named after the folder.
"""

from __future__ import annotations

import csv
from pathlib import Path

from archive.importers.records import (
    DEFAULT_LANGUAGE,
    RecordError,
    slug_for,
    sub_corpus_info,
)
from common.search import SubCorpusInfo

GENRES = {"press", "debates", "other"}


def read_metadata_csv(path: Path) -> tuple[dict[str, tuple[int, dict]], list[RecordError]]:
    """Map file name -> (CSV line, row with stripped values); list the rows that are refused."""
    rows: dict[str, tuple[int, dict]] = {}
    errors: list[RecordError] = []
    with path.open(encoding="utf-8-sig", newline="") as handle:
        reader = csv.DictReader(handle, strict=True)  # an unterminated quote is an error
        try:
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
        except csv.Error as exc:
            errors.append(RecordError(reader.line_num, f"{path.name}: unreadable CSV ({exc})"))
        except UnicodeDecodeError:
            errors.append(RecordError(reader.line_num + 1, f"{path.name}: not UTF-8 text"))
    return rows, errors


def row_sub_corpus(row: dict, default_slug: str, *, line: int, where: str) -> SubCorpusInfo:
    """Return the sub-corpus a row names (``default_slug`` when it names none)."""
    genre = row.get("genre") or None
    if genre and genre not in GENRES:
        raise RecordError(line, f"{where}: genre must be one of {sorted(GENRES)}")
    slug = slug_for(row["sub_corpus"]) if row.get("sub_corpus") else default_slug
    info = sub_corpus_info(slug, row.get("sub_corpus_name", ""), genre)
    if row.get("sub_corpus_name") and info.name != row["sub_corpus_name"]:
        info = SubCorpusInfo(slug, row["sub_corpus_name"], info.genre, language=DEFAULT_LANGUAGE)
    return info
