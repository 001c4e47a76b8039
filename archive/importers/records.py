"""The record every importer produces, validation helpers and the known sub-corpora table."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from django.utils.text import slugify

from archive.iiif import iiif_url_problem
from archive.layout import DocumentLayout
from common.document_keys import document_key
from common.french_dates import format_french_date
from common.search import SubCorpusInfo

# Every corpus imported so far is French; the language picks the BM25 analyzer.
DEFAULT_LANGUAGE = "fr"


class RecordError(ValueError):
    """A record that cannot be imported, with where it was found."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(f"line {line}: {message}")
        self.line = line
        self.message = message


# Nice names for corpora we know; anything else gets its slug or source as name.
KNOWN_SUB_CORPORA = {
    "legaulois_1887_v1": SubCorpusInfo(
        "legaulois_1887_v1", "Le Gaulois", "press",
        "Le Gaulois, Paris daily, 1887 (BnF Gallica OCR).", DEFAULT_LANGUAGE,
    ),
    "lintransigeant_1887_v1": SubCorpusInfo(
        "lintransigeant_1887_v1", "L'Intransigeant", "press",
        "L'Intransigeant, Paris daily, 1887 (BnF Gallica OCR).", DEFAULT_LANGUAGE,
    ),
    "debats_1887": SubCorpusInfo(
        "debats_1887", "Chambre des députés, débats (Journal officiel)", "debates",
        "Sections of the Chambre des députés debates as printed in the Journal officiel, 1887.",
        DEFAULT_LANGUAGE,
    ),
}


def sub_corpus_info(slug: str, source: str = "", genre: str | None = None) -> SubCorpusInfo:
    """Describe sub-corpus ``slug``: the known table first, then guesses from its names."""
    if slug in KNOWN_SUB_CORPORA:
        return KNOWN_SUB_CORPORA[slug]
    haystack = f"{slug} {source}".lower()
    if genre is None:
        debates = slug.startswith("debats") or "journal officiel" in haystack
        genre = "debates" if debates or "débat" in haystack else "press"
    return SubCorpusInfo(slug, source or slug, genre, language=DEFAULT_LANGUAGE)


@dataclass(frozen=True)
class FolderOptions:
    """What the command line says of a folder of ALTO pages beyond its METS or CSV.

    Where those say nothing: ``sub_corpus`` is the sub-corpus's name (its slug made from it)
    instead of the folder's; ``genre`` one of the CSV's genres; ``title`` the name documents are
    titled by (with their date, and a page of its own with its file's stem) instead of their
    external id. ``iiif_manifest`` is a IIIF Presentation manifest file naming the pages' images
    (`iiif_manifest.py`).
    """

    sub_corpus: str = ""
    genre: str = ""
    title: str = ""
    iiif_manifest: Path | None = None


@dataclass
class DocumentRecord:
    line: int
    sub_corpus: SubCorpusInfo
    external_id: str
    text: str
    title: str = ""
    publication: str = ""
    date: dt.date | None = None
    date_precision: str = ""
    page: str = ""
    url: str = ""
    iiif_url: str = ""  # a IIIF Image API base or manifest (archive/iiif.py), checked at reading
    metadata: dict = field(default_factory=dict)
    # Scanned documents (ALTO): pages, blocks and word confidences; None for plain text.
    layout: DocumentLayout | None = None

    @property
    def key(self) -> str:
        return document_key(self.sub_corpus.slug, self.external_id)

    @property
    def ocr_confidence(self) -> float | None:
        """Mean confidence of the words the OCR rated (None without a layout or ratings)."""
        return self.layout.confidence if self.layout is not None else None

    def content_hash(self) -> str:
        """Hash the text, every citation field and the layout, so any change is noticed.

        The layout (and with it every word confidence) and the IIIF URL join the hash only when
        there is one, so documents without them keep the hash they were stored with.
        """
        fields = [self.text, self.title, self.publication, self.date and self.date.isoformat(),
                  self.date_precision, self.page, self.url, self.metadata]
        if self.layout is not None:
            fields.append(self.layout.to_json())
        if self.iiif_url:
            fields.append({"iiif_url": self.iiif_url})
        payload = json.dumps(fields, ensure_ascii=False, sort_keys=True, default=str)
        return hashlib.sha256(payload.encode("utf-8", "surrogatepass")).hexdigest()


def dated_title(name: str, date: dt.date | None, precision: str) -> str:
    """Title a document by a name and its French date: "Le Petit Journal, 26 février 1887"."""
    return ", ".join(p for p in (name, format_french_date(date, precision)) if p)


_FULL_DATE = re.compile(r"^(\d{4})(?:-(\d{1,2})(?:-(\d{1,2}))?)?$")


def parse_date(value, line: int) -> tuple[dt.date | None, str]:
    """Parse YYYY, YYYY-MM or YYYY-MM-DD into (date, precision); empty means unknown."""
    if value is None or value == "":
        return None, ""
    if not isinstance(value, str):
        raise RecordError(line, f"date must be a string like 1887-02-26, got {value!r}")
    match = _FULL_DATE.match(value.strip())
    if not match:
        raise RecordError(line, f"unparsable date {value!r} (expected YYYY, YYYY-MM or YYYY-MM-DD)")
    year, month, day = match.groups()
    return date_from_parts(year, month, day, line, shown=value)


def date_from_parts(year, month, day, line: int, shown=None) -> tuple[dt.date | None, str]:
    """Build (date, precision) from year/month/day parts, any of which may be missing."""
    shown = shown if shown is not None else f"{year}-{month}-{day}"
    if year in (None, ""):
        return None, ""
    try:
        y = int(year)
        m = int(month) if month not in (None, "") else None
        d = int(day) if day not in (None, "") and m is not None else None
        date = dt.date(y, m or 1, d or 1)
    except (TypeError, ValueError):
        raise RecordError(line, f"unparsable date {shown!r}") from None
    precision = "day" if d else "month" if m else "year"
    return date, precision


def require_str(row: dict, key: str, line: int, *, allow_empty: bool = False) -> str:
    """Return ``row[key]`` as a string, or raise a RecordError naming the field."""
    if key not in row or row[key] is None:
        raise RecordError(line, f"missing field {key!r}")
    value = row[key]
    if isinstance(value, int) and not isinstance(value, bool) and key not in {"text"}:
        value = str(value)
    if not isinstance(value, str):
        raise RecordError(line, f"field {key!r} must be a string, got {type(value).__name__}")
    if not allow_empty and not value.strip():
        raise RecordError(line, f"field {key!r} is empty")
    return value


def iiif_value(value: object, line: int, where: str = "") -> str:
    """Return the IIIF URL ``value`` (stripped; "" when absent), or refuse it (archive/iiif.py)."""
    if value is None or value == "":
        return ""
    if not isinstance(value, str):
        raise RecordError(line, f"{where}field 'iiif' must be a string, got {type(value).__name__}")
    value = value.strip()
    if value and (problem := iiif_url_problem(value)):
        raise RecordError(line, f"{where}{problem}")
    return value


def slug_for(value: str) -> str:
    """Turn a folder or collection name into a sub-corpus slug."""
    return slugify(value).replace("-", "_") or "documents"
