"""The document key `<sub-corpus slug>:<external id>`: the one place that builds and splits it.

Gold ids, exports, search hits and the engine all name a document by this key. Python code builds it
with `document_key`, SQL with `document_key_sql` (the same concatenation), and splits it with
`split_document_key`.
"""

from __future__ import annotations

SEPARATOR = ":"


def document_key(slug: str, external_id: str) -> str:
    """Return the key of the document `external_id` of sub-corpus `slug`."""
    return f"{slug}{SEPARATOR}{external_id}"


def split_document_key(key: str) -> tuple[str, str]:
    """Return (slug, external id) of a key; a key without a separator raises ValueError."""
    slug, separator, external_id = key.partition(SEPARATOR)
    if not separator or not slug or not external_id:
        raise ValueError(f"not a document key (expected 'sub-corpus:id'): {key!r}")
    return slug, external_id


def document_key_sql(slug_column: str = "s.slug", external_id_column: str = "d.external_id") -> str:
    """Return the SQL expression of the key over the given columns."""
    return f"({slug_column} || '{SEPARATOR}' || {external_id_column})"
