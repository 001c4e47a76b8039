"""Archive test fixtures: the hash embedding provider by default, corpus paths, sample files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SHARED_EVAL = ROOT.parent / "shared" / "eval"
# The shipped demo copies are byte-identical to the shared slices (test_demo_corpus checks it).
PRESS_CORPUS = ROOT / "demo" / "historiqa-press" / "corpus.jsonl"
FULL_CORPUS = ROOT / "demo" / "historiqa" / "corpus.jsonl"


@pytest.fixture(autouse=True)
def _hash_embeddings(settings):
    """Embed with the model-free hash provider unless a test asks for a real model."""
    settings.TRACE_EMBEDDING_PROVIDER = "hash"


def shared_line(raw_id: str, text: str, *, collection: str = "legaulois_1887_v1",
                source: str = "Le Gaulois", date: str | None = "1887-02-26") -> str:
    return json.dumps({
        "doc_id": f"{collection}:{raw_id}", "collection": collection, "source": source,
        "raw_id": raw_id, "date": date, "text": text,
    }, ensure_ascii=False)


@pytest.fixture
def write_jsonl(tmp_path):
    """Write lines to a .jsonl file and return its path."""
    def write(lines: list[str], name: str = "corpus.jsonl") -> Path:
        path = tmp_path / name
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        return path
    return write


def require(path: Path) -> Path:
    if not path.exists():
        pytest.fail(f"demo corpus missing: {path}")
    return path
