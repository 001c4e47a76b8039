"""Make text safe for the citation formats: one line, no formula, no markup, no stray braces."""

from __future__ import annotations

import re

# Characters any reader may take as a line or record break, and other control characters.
_BREAKS = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]+")
_SURROGATES = re.compile(r"[\ud800-\udfff]")
# A cell starting with one of these runs as a formula (or hides one) in a spreadsheet.
FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r", "\n")
_MD_INLINE = re.compile(r"([\\`*_\[\]<&~])")
_HTTP_URL = re.compile(r"https?://[^\s<>\"'`\\]+", re.IGNORECASE)


def one_line(value: str) -> str:
    """Collapse line breaks and control characters into single spaces."""
    value = _SURROGATES.sub("\ufffd", value)
    return " ".join(_BREAKS.sub(" ", value).split())


def csv_cell(value):
    """Put a value on one line and keep a spreadsheet from running it as a formula."""
    if not isinstance(value, str):
        return value
    value = one_line(value)
    return "'" + value if value.startswith(FORMULA_PREFIXES) else value


def bibtex_value(value: str) -> str:
    """Put a value on one line with balanced braces (OCR text is full of stray ones)."""
    return one_line(value).replace("\\", "/").replace("{", "(").replace("}", ")")


def bibtex_keys(keys: list[str]) -> list[str]:
    """Turn source keys into BibTeX keys, distinct even when two sanitise alike."""
    used: set[str] = set()
    result = []
    for key in keys:
        base = re.sub(r"[^A-Za-z0-9_-]+", "_", key).strip("_") or "source"
        candidate, suffix = base, 1
        while candidate.lower() in used:
            suffix += 1
            candidate = f"{base}-{suffix}"
        used.add(candidate.lower())
        result.append(candidate)
    return result


def md_text(value: str, *, heading: bool = False) -> str:
    """Render text literally in Markdown, on one line, escaping only what would become markup."""
    text = _MD_INLINE.sub(r"\\\1", one_line(value))
    if heading:
        text = text.replace("#", "\\#")
    if match := re.match(r"\d+(?=[.)])", text):
        return text[:match.end()] + "\\" + text[match.end():]
    if text[:1] and text[0] in "#>+=-":
        return "\\" + text
    return text


def md_code(value: str) -> str:
    """Render text as inline code, whatever backticks it holds."""
    text = one_line(value)
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def md_link(url: str) -> str:
    """Link only http(s) addresses; show anything else (ark, doi, other schemes) as code."""
    url = one_line(url)
    if _HTTP_URL.fullmatch(url):
        return f"<{url}>"
    return md_code(url)
