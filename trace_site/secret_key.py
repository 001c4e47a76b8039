"""The secret key kept in the data directory when TRACE_SECRET_KEY is unset, made on first use."""

from __future__ import annotations

import functools
import os
import secrets
from pathlib import Path

from django.utils.functional import lazy


def stored_secret_key(key_file: Path) -> str:
    """Read the key file, creating it (owner-only, never overwritten) when it does not exist."""
    if not key_file.exists():
        key_file.parent.mkdir(parents=True, exist_ok=True)
        try:
            # O_EXCL: two processes starting together keep the one key the first one wrote.
            fd = os.open(key_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            pass
        else:
            with os.fdopen(fd, "w") as out:
                out.write(secrets.token_urlsafe(50))
    key = key_file.read_text().strip()
    if not key:
        raise RuntimeError(f"The secret key file {key_file} is empty; delete it to get a new key.")
    return key


def lazy_secret_key(key_file: Path) -> str:
    """Return a stand-in for the key that reads (or creates) the file only when first used."""
    return lazy(functools.cache(lambda: stored_secret_key(key_file)), str)()
