"""Write a measured table into a document between markers, with the command and the date.

A block looks like::

    <!-- BEGIN generated: bench-engine -->
    ...written by the command...
    <!-- END generated: bench-engine -->

Only the text between the markers is replaced, so the prose around a figure stays hand-written
while the figure itself always comes from the command that measured it.
"""

from __future__ import annotations

import datetime as dt
import shlex
from collections.abc import Sequence
from pathlib import Path


class GeneratedBlockError(ValueError):
    """The document has no (or a malformed) block of that name."""


def markers(name: str) -> tuple[str, str]:
    """Return the opening and closing marker lines of a generated block."""
    return f"<!-- BEGIN generated: {name} -->", f"<!-- END generated: {name} -->"


def check_generated_block(path: Path, name: str) -> str:
    """Return the document's text, or raise when it lacks exactly one well-formed block `name`."""
    begin, end = markers(name)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise GeneratedBlockError(f"{path}: {exc.strerror}") from None
    if text.count(begin) != 1 or text.count(end) != 1 or text.index(begin) > text.index(end):
        raise GeneratedBlockError(
            f"{path} must hold exactly one '{begin}' followed by one '{end}'")
    return text


def write_generated_block(path: Path, name: str, body: str, *, command: str,
                          when: dt.date | None = None) -> None:
    """Replace the block `name` of the document with `body`, saying which command wrote it when."""
    begin, end = markers(name)
    text = check_generated_block(path, name)
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    stamp = (when or dt.date.today()).isoformat()
    block = f"{begin}\n_Written by `{command}` on {stamp}._\n\n{body.strip()}\n{end}"
    path.write_text(head + block + tail, encoding="utf-8")


def write_doc_blocks(docs: Sequence[Path], block: str, body: str, *, words: Sequence[str],
                     default_block: str, base: Path) -> None:
    """Write `body` into the block `block` of every document of a script's `--write-doc`, the
    command shown as `words` followed by those `--write-doc` (named under `base`) and by
    `--doc-block` when it is not `default_block`."""
    shown = [*words, *(arg for doc in docs for arg in ("--write-doc", shown_path(doc, base)))]
    if block != default_block:
        shown += ["--doc-block", block]
    for doc in docs:
        write_generated_block(doc, block, body, command=shlex.join(shown))


def shown_path(path: Path, base: Path) -> str:
    """Name a file by its place under `base` (the repository), else by its name alone."""
    resolved, root = Path(path).resolve(), base.resolve()
    return str(resolved.relative_to(root)) if resolved.is_relative_to(root) else resolved.name
