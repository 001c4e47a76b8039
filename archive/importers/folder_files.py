"""The files an import may read: regular files inside the folder given, never through a link.

A folder import lists its entries itself (``regular_files``): a symbolic link, even to a file of
the folder, and anything that is not a regular file (a fifo, a device) is refused with its name,
never opened. A reference inside a file (a METS ``FLocat``) is resolved by ``inside`` without
following links: it must name a path under the folder whose every component is a real directory
or file; ``..`` that leaves the folder, an absolute path, or a ``file:`` URL elsewhere is refused.
"""

from __future__ import annotations

import os
from pathlib import Path

from archive.importers.records import RecordError

LINK_REFUSED = "a symbolic link; only regular files inside the folder are imported, nothing read"


def regular_files(folder: Path, suffix: str) -> tuple[list[Path], list[RecordError]]:
    """Return the regular files of ``folder`` ending in ``suffix`` (by name), and the refusals."""
    files: list[Path] = []
    refused: list[RecordError] = []
    for entry in sorted(folder.iterdir()):
        if entry.suffix.lower() != suffix:
            continue
        if entry.is_symlink():
            refused.append(RecordError(0, f"{entry.name}: {LINK_REFUSED}"))
        elif entry.is_file():
            files.append(entry)
        elif not entry.is_dir():
            refused.append(RecordError(0, f"{entry.name}: not a regular file; nothing read"))
    return files, refused


def inside(root: Path, base: Path, reference: str) -> Path:
    """Return ``reference`` (relative to ``base``, a folder under ``root``) as a path under
    ``root`` reached through no link, or raise ValueError saying why not.

    ``root`` must be resolved already. The path need not exist; where it does, no component of it
    may be a symbolic link.
    """
    path = Path(os.path.normpath(base / reference))
    if not path.is_relative_to(root):
        raise ValueError("outside the imported folder")
    step = root
    for part in path.relative_to(root).parts:
        step = step / part
        if step.is_symlink():
            raise ValueError(f"reached through the symbolic link {step.relative_to(root)}")
    return path
