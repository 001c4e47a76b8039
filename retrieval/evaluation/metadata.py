"""Provenance recorded with every evaluation run."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings


def git_revision(root: Path | None = None) -> str:
    """Return the checked-out commit by reading .git directly (no git process)."""
    git = (root or Path(settings.BASE_DIR)) / ".git"
    try:
        head = (git / "HEAD").read_text().strip()
        if not head.startswith("ref: "):
            return head
        ref = head[5:]
        if (git / ref).exists():
            return (git / ref).read_text().strip()
        for line in (git / "packed-refs").read_text().splitlines():
            if line.endswith(" " + ref):
                return line.split()[0]
    except OSError:
        pass
    return "unknown"


def embedding_models() -> str:
    """Return the embedding model name(s) stored on chunks."""
    from archive.models import Chunk

    names = sorted(
        set(Chunk.objects.exclude(embedding_model="").values_list("embedding_model", flat=True))
    )
    return ", ".join(names) or "none"
