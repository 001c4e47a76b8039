"""Read corpora in the supported layouts into validated ``DocumentRecord``s, one at a time."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings

from archive.importers.alto import read_alto_folder, xml_files
from archive.importers.checks import record_problems
from archive.importers.jsonl import debate_headings, detect_jsonl_format, iter_jsonl
from archive.importers.metadata_csv import GENRES
from archive.importers.records import DocumentRecord, FolderOptions, RecordError
from archive.importers.txt import read_txt_folder

FORMATS = ("auto", "shared", "historiqa", "txt", "alto")

__all__ = [
    "FORMATS", "DocumentRecord", "FileScan", "RecordError", "checked_records", "read_records",
    "scan_file",
]


def resolve_format(path: Path, fmt: str) -> str:
    """Return the concrete layout of ``path`` for ``fmt`` ("auto" looks at the data).

    A folder is ALTO when it holds .xml files and no .txt file; otherwise it is a .txt folder.
    """
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; expected one of {FORMATS}")
    if fmt != "auto":
        return fmt
    if path.is_dir():
        return "alto" if xml_files(path) and not any(path.glob("*.txt")) else "txt"
    return detect_jsonl_format(path)


@dataclass
class FileScan:
    """What a first, validating pass over an input learned: its errors and debate headings."""

    path: Path
    format: str
    metadata_csv: Path | None = None
    defaults: FolderOptions = field(default_factory=FolderOptions)
    records: int = 0
    errors: list[RecordError] = field(default_factory=list)
    headings: dict[str, dict[str, str]] = field(default_factory=dict)

    @property
    def lines(self) -> int:
        return self.records + len(self.errors)


def _raw_items(scan: FileScan, *, with_headings: bool) -> Iterable[DocumentRecord | RecordError]:
    if scan.format == "txt":
        if not scan.path.is_dir():
            raise ValueError(f"{scan.path} is not a folder of .txt files")
        return read_txt_folder(scan.path, scan.metadata_csv)
    if scan.format == "alto":
        if not scan.path.is_dir():
            raise ValueError(f"{scan.path} is not a folder of ALTO (.xml) files")
        return read_alto_folder(scan.path, scan.metadata_csv,
                                max_file_bytes=settings.TRACE_ALTO_MAX_FILE_BYTES,
                                defaults=scan.defaults)
    return iter_jsonl(scan.path, scan.format, scan.headings if with_headings else None)


def _key_digest(key: str) -> bytes:
    # A 16-byte digest instead of the key: the set of keys seen stays small for huge files.
    return hashlib.blake2b(key.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def checked_records(
    scan: FileScan, *, with_headings: bool = True,
    on_parsed: Callable[[DocumentRecord], object] | None = None,
) -> Iterator[DocumentRecord | RecordError]:
    """Yield each input item once checked: a record that can be written, or its error.

    A record is valid once nothing in it would be refused on writing (see ``checks``) and its
    key was not seen earlier in the input.
    """
    seen: dict[bytes, int] = {}
    for item in _raw_items(scan, with_headings=with_headings):
        if isinstance(item, RecordError):
            yield item
            continue
        if on_parsed is not None:
            on_parsed(item)
        if problems := record_problems(item):
            where = f"{item.metadata['filename']}: " if "filename" in item.metadata else ""
            yield RecordError(item.line, where + "; ".join(problems))
        elif (digest := _key_digest(item.key)) in seen:
            yield RecordError(
                item.line, f"duplicate document {item.key} (first seen at line {seen[digest]})"
            )
        else:
            seen[digest] = item.line
            yield item


def scan_file(path: Path, *, fmt: str = "auto", metadata_csv: Path | None = None,
              defaults: FolderOptions | None = None) -> FileScan:
    """Check every record of ``path`` without keeping them: errors, counts, debate headings."""
    if not path.exists():
        raise FileNotFoundError(f"{path} does not exist")
    scan = FileScan(path=path, format=resolve_format(path, fmt), metadata_csv=metadata_csv,
                    defaults=defaults or FolderOptions())
    if scan.format != "alto" and scan.defaults != FolderOptions():
        raise ValueError("--sub-corpus, --genre, --title and --iiif-manifest describe a folder "
                         "of ALTO pages; the other formats name them in each record or in "
                         "--metadata")
    if scan.defaults.genre and scan.defaults.genre not in GENRES:
        raise ValueError(f"--genre must be one of {', '.join(sorted(GENRES))}")
    debates: list[DocumentRecord] = []
    for item in checked_records(scan, with_headings=False, on_parsed=debates.append):
        if isinstance(item, RecordError):
            scan.errors.append(item)
        else:
            scan.records += 1
        if debates:
            # Headings come from every parsed debate section, valid or not, as titles always did.
            for slug, found in debate_headings(debates).items():
                scan.headings.setdefault(slug, {}).update(found)
            debates.clear()
    scan.errors.sort(key=lambda e: e.line)
    return scan


def read_records(
    path: Path, *, fmt: str = "auto", metadata_csv: Path | None = None
) -> tuple[list[DocumentRecord], list[RecordError], str]:
    """Read every record of ``path`` into memory: (valid records, errors, resolved format)."""
    scan = scan_file(path, fmt=fmt, metadata_csv=metadata_csv)
    records = [r for r in checked_records(scan) if isinstance(r, DocumentRecord)]
    return records, scan.errors, scan.format
