"""Decide which document addresses may become links: http(s) URLs, ark and DOI identifiers."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

# Browsers drop these anywhere in a URL before reading its scheme ("java\tscript:").
_DROPPED_INSIDE = str.maketrans("", "", "\t\n\r")
# C0 controls and spaces are trimmed from both ends the same way.
_TRIMMED = "".join(chr(c) for c in range(0x21))
_ARK = re.compile(r"^ark:/?(\d{5,}/\S+)$", re.IGNORECASE)
_DOI = re.compile(r"^(?:doi:\s*)?(10\.\d{4,9}/\S+)$", re.IGNORECASE)

ARK_RESOLVER = "https://n2t.net/ark:/"
DOI_RESOLVER = "https://doi.org/"


def link_target(address: object) -> str | None:
    """Return the URL a document address may link to, or None when it must stay plain text.

    http and https URLs with a host link as they are; ``ark:/NAAN/name`` and ``doi:10.x/y``
    (or a bare ``10.x/y``) link through their public resolvers. Anything else (javascript:,
    data:, a relative or scheme-relative path, control characters) is never a link.
    """
    if not isinstance(address, str):
        return None
    cleaned = address.translate(_DROPPED_INSIDE).strip(_TRIMMED)
    if not cleaned or any(ord(c) < 0x20 or ord(c) == 0x7F for c in cleaned):
        return None
    if ark := _ARK.match(cleaned):
        return ARK_RESOLVER + ark.group(1)
    if doi := _DOI.match(cleaned):
        return DOI_RESOLVER + doi.group(1)
    try:
        parts = urlsplit(cleaned)
    except ValueError:
        return None
    if parts.scheme.lower() in {"http", "https"} and parts.hostname:
        return cleaned
    return None
