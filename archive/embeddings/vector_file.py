"""Vectors shipped in a file, so the demo archive loads without computing its embeddings.

A vector file (``.npz``, read without pickles) holds, for one provider, the SHA-256 of each
chunk text (32 raw bytes) and its vector as float16 (half the size; on the demo's chunks a
cosine moves by less than 1e-4), with a JSON header: format, provider name, dimensions, count
and a checksum of the arrays. ``vector_file_seed`` checks all of it and puts the vectors into
``EmbeddingCache``, where an ingest finds them by (content hash, provider) like any cached
vector: a chunk whose text changed has another hash and is embedded as usual, and a file of
another provider, of another width, damaged or unreadable is ignored with the reason, so every
vector is computed.
"""

from __future__ import annotations

import hashlib
import json
import re
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from archive.embeddings.cache import LOOKUP_BATCH
from archive.models import EMBEDDING_DIMENSIONS, EmbeddingCache

FORMAT = 1
# A stored vector is a unit row to within float16's rounding.
NORM_TOLERANCE = 0.01


class VectorFileError(ValueError):
    """The file cannot be used: unreadable, damaged, or made for another provider or width."""


@dataclass(frozen=True)
class VectorFile:
    model: str
    hashes: list[str]  # hex SHA-256 of each chunk text, as ``content_sha256`` gives it
    vectors: np.ndarray  # float32 rows, L2-normalised


@dataclass(frozen=True)
class SeedResult:
    path: Path
    model: str
    added: list[str] = field(default_factory=list)  # hashes put into the cache table
    problem: str = ""  # why the file was not used ("" when it was)

    @property
    def message(self) -> str:
        if self.problem:
            return f"Shipped vectors not used ({self.problem}); they will be computed."
        return f"{len(self.added)} shipped vectors of {self.model} found in {self.path.name}."


def vector_file_path(directory: Path, model: str) -> Path:
    """Name the vector file of ``model`` in ``directory`` (one file per provider)."""
    return Path(directory) / f"embeddings-{re.sub(r'[^A-Za-z0-9._-]+', '_', model)}.npz"


def _checksum(digests: np.ndarray, vectors: np.ndarray) -> str:
    return hashlib.sha256(digests.tobytes() + vectors.tobytes()).hexdigest()


def vector_file_write(path: Path, model: str, hashes: list[str], vectors: np.ndarray) -> int:
    """Write ``vectors`` (one row per hash, duplicates dropped) to ``path``; return the count."""
    rows: dict[str, np.ndarray] = {}
    for h, v in zip(hashes, vectors, strict=True):
        rows.setdefault(h, v)
    ordered = sorted(rows)
    digests = np.array([bytes.fromhex(h) for h in ordered], dtype="S32").view(np.uint8)
    digests = digests.reshape(len(ordered), 32)
    half = np.asarray([rows[h] for h in ordered], dtype=np.float16).reshape(
        len(ordered), EMBEDDING_DIMENSIONS)
    header = {"format": FORMAT, "model": model, "dimensions": EMBEDDING_DIMENSIONS,
              "count": len(ordered), "checksum": _checksum(digests, half)}
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as out:
        np.savez_compressed(out, header=np.array(json.dumps(header)), hashes=digests,
                            vectors=half)
    return len(ordered)


def vector_file_read(path: Path, model: str) -> VectorFile:
    """Read and check ``path`` for provider ``model``; raise ``VectorFileError`` if unusable."""
    try:
        with np.load(Path(path), allow_pickle=False) as data:
            header = json.loads(str(data["header"]))
            digests = np.asarray(data["hashes"])
            half = np.asarray(data["vectors"])
    except FileNotFoundError:
        raise VectorFileError(f"no file {Path(path).name}") from None
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as exc:
        raise VectorFileError(f"{Path(path).name} is unreadable: {exc}") from None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise VectorFileError(f"{Path(path).name} is not a vector file of format {FORMAT}")
    if header.get("model") != model:
        raise VectorFileError(f"made with {header.get('model')!r}, not {model!r}")
    count = header.get("count")
    if (header.get("dimensions") != EMBEDDING_DIMENSIONS or half.dtype != np.float16
            or half.shape != (count, EMBEDDING_DIMENSIONS)):
        raise VectorFileError(
            f"vectors of shape {half.shape}, not {count} rows of {EMBEDDING_DIMENSIONS}")
    if digests.dtype != np.uint8 or digests.shape != (count, 32):
        raise VectorFileError("content hashes of the wrong shape")
    if _checksum(digests, half) != header.get("checksum"):
        raise VectorFileError("the checksum does not match: the file is damaged")
    vectors = half.astype(np.float32)
    norms = np.linalg.norm(vectors, axis=1)
    if not np.all(np.isfinite(vectors)) or np.any(np.abs(norms - 1) > NORM_TOLERANCE):
        raise VectorFileError("some vectors are not unit rows")
    vectors /= norms[:, None]
    return VectorFile(model=model, hashes=[bytes(d).hex() for d in digests], vectors=vectors)


def vector_file_seed(path: Path, model: str) -> SeedResult:
    """Put the checked vectors of ``path`` into the cache table (those it lacks)."""
    try:
        shipped = vector_file_read(path, model)
    except VectorFileError as exc:
        return SeedResult(path=Path(path), model=model, problem=str(exc))
    present: set[str] = set()
    for i in range(0, len(shipped.hashes), LOOKUP_BATCH):
        present.update(EmbeddingCache.objects.filter(
            model=model, content_hash__in=shipped.hashes[i : i + LOOKUP_BATCH],
        ).values_list("content_hash", flat=True))
    rows = [EmbeddingCache(content_hash=h, model=model, vector=v)
            for h, v in zip(shipped.hashes, shipped.vectors, strict=True) if h not in present]
    EmbeddingCache.objects.bulk_create(rows, batch_size=LOOKUP_BATCH, ignore_conflicts=True)
    return SeedResult(path=Path(path), model=model, added=[r.content_hash for r in rows])
