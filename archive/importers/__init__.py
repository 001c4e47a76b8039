"""Read corpora in the supported layouts into validated ``DocumentRecord``s."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from archive.importers.checks import record_problems
from archive.importers.jsonl import detect_jsonl_format, read_jsonl
from archive.importers.records import DocumentRecord, RecordError
from archive.importers.txt import read_txt_folder

FORMATS = ("auto", "shared", "historiqa", "txt")

__all__ = ["FORMATS", "DocumentRecord", "RecordError", "read_records"]


def resolve_format(path: Path, fmt: str) -> str:
    """Return the concrete layout of ``path`` for ``fmt`` ("auto" looks at the data)."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; expected one of {FORMATS}")
    if fmt != "auto":
        return fmt
    if path.is_dir():
        return "txt"
    return detect_jsonl_format(path)


def read_records(
    path: Path, *, fmt: str = "auto", metadata_csv: Path | None = None
) -> tuple[list[DocumentRecord], list[RecordError], str]:
    """Read every record of ``path``: (valid records, errors, resolved format).

    A record is valid once nothing in it would be refused on writing (see ``checks``).
    """
    if not path.exists():
        raise FileNotFoundError(f"{path} does not exist")
    fmt = resolve_format(path, fmt)
    if fmt == "txt":
        if not path.is_dir():
            raise ValueError(f"{path} is not a folder of .txt files")
        items: Iterable[DocumentRecord | RecordError] = read_txt_folder(path, metadata_csv)
    else:
        items = read_jsonl(path, fmt)
    records: list[DocumentRecord] = []
    errors: list[RecordError] = []
    seen: dict[str, int] = {}
    for item in items:
        if isinstance(item, RecordError):
            errors.append(item)
        elif problems := record_problems(item):
            where = f"{item.metadata['filename']}: " if "filename" in item.metadata else ""
            errors.append(RecordError(item.line, where + "; ".join(problems)))
        elif item.key in seen:
            errors.append(RecordError(
                item.line, f"duplicate document {item.key} (first seen at line {seen[item.key]})"
            ))
        else:
            seen[item.key] = item.line
            records.append(item)
    errors.sort(key=lambda e: e.line)
    return records, errors, fmt
