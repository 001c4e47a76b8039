"""Provenance recorded with every evaluation run."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings

from archive.models import Chunk


def git_revision(root: Path | None = None) -> str:
    """Return the checked-out commit by reading .git directly (no git process)."""
    git = (root or Path(settings.BASE_DIR)) / ".git"
    try:
        common = git
        if git.is_file():  # a linked worktree: HEAD in its own git dir, refs in the common one
            git = Path(git.read_text().strip().removeprefix("gitdir: "))
            common = git
            if (git / "commondir").exists():
                common = (git / (git / "commondir").read_text().strip()).resolve()
        head = (git / "HEAD").read_text().strip()
        if not head.startswith("ref: "):
            return head
        ref = head[5:]
        for base in (git, common):
            if (base / ref).exists():
                return (base / ref).read_text().strip()
        for line in (common / "packed-refs").read_text().splitlines():
            if line.endswith(" " + ref):
                return line.split()[0]
    except OSError:
        pass
    return "unknown"


def embedding_models() -> str:
    """Return the embedding model name(s) stored on chunks."""

    names = sorted(
        set(Chunk.objects.exclude(embedding_model="").values_list("embedding_model", flat=True))
    )
    return ", ".join(names) or "none"
