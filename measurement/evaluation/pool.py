"""Describe the candidate pool an evaluation ran on: its size and whether it is realistic."""

from __future__ import annotations

from collections.abc import Iterable

# A pool where gold documents are at least this share of the documents is a gold-only pool:
# every system finds the answers among few competitors, and its figures overstate recall. In a
# real archive (the historiqa sittings with the rest of each day's Journal officiel) the dev
# gold documents are about one document in eight.
GOLD_ONLY_SHARE = 1 / 3


def describe_pool(label: str, pool_keys: Iterable[str], gold_keys: Iterable[str]) -> dict:
    """Return the pool's label, document and gold counts, gold share and kind."""
    pool = set(pool_keys)
    gold = set(gold_keys) & pool
    share = len(gold) / len(pool) if pool else 0.0
    kind = "gold-only" if share >= GOLD_ONLY_SHARE else "realistic"
    return {"label": label, "documents": len(pool), "gold_documents": len(gold),
            "gold_share": round(share, 4), "kind": kind}


def pool_phrase(pool: dict) -> str:
    """Say in one line which pool a result was measured on."""
    return (f"{pool['kind']} pool, {pool['documents']} documents ({pool['label']}; "
            f"{pool['gold_documents']} of them gold for these questions)")
