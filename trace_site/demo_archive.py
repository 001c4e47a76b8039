"""The demo archive: its corpus files, and the vectors of their chunks shipped beside them.

``serve`` loads the corpus files on a first start; the shipped vectors (one file per embedding
provider, see ``archive.embeddings.vector_file``) spare it computing the embeddings, and
``manage.py export_demo_embeddings`` writes them from an archive that loaded the demo.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from django.conf import settings

from archive.embeddings.vector_file import vector_file_path, vector_file_write
from archive.importers import checked_records, scan_file
from archive.importers.records import DocumentRecord
from archive.models import Chunk
from archive.selectors import documents_by_keys

DEMO_DIR = Path(settings.BASE_DIR) / "demo" / "historiqa"
# The demo archive is the realistic pool: the gold-bearing documents and the rest of the same
# sittings (distractors), so what a historian sees matches what the evaluation measures.
DEMO_CORPUS_FILES = (DEMO_DIR / "corpus.jsonl", DEMO_DIR / "distractors.jsonl")


def demo_vectors_path(model: str) -> Path:
    """The file holding the demo chunks' vectors of provider ``model``."""
    return vector_file_path(DEMO_DIR, model)


def corpus_keys(paths: tuple[Path, ...] | list[Path]) -> list[str]:
    """The keys of the valid documents of the corpus files ``paths``."""
    keys: list[str] = []
    for path in paths:
        keys.extend(r.key for r in checked_records(scan_file(Path(path)), with_headings=False)
                    if isinstance(r, DocumentRecord))
    return keys


def demo_vectors_export(model: str, *, paths: tuple[Path, ...] | list[Path] = DEMO_CORPUS_FILES,
                        out: Path | None = None) -> tuple[Path, int, int, int]:
    """Write the vectors of ``model`` held by the chunks of the documents of ``paths``.

    Returns (file, vectors written, documents found in the archive, documents in the files);
    writes nothing when no chunk holds such a vector.
    """
    keys = corpus_keys(paths)
    documents = documents_by_keys(keys)
    rows = list(Chunk.objects.filter(
        document_id__in=[d.pk for d in documents.values()], embedding_model=model,
        embedding__isnull=False,
    ).order_by("pk").values_list("content_hash", "embedding"))
    out = out or demo_vectors_path(model)
    if not rows:  # nothing to ship: an existing file stays as it is
        return out, 0, len(documents), len(keys)
    vectors = np.asarray([v for _, v in rows], dtype=np.float32)
    written = vector_file_write(out, model, [h for h, _ in rows], vectors)
    return out, written, len(documents), len(keys)
