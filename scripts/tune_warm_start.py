"""Measure the per-sub-corpus warm start's channel weights on dev questions, by two folds.

The engine's warm start runs inside one sub-corpus per sub-question and shows its first ten
documents to the judge. For each dev question and each sub-corpus holding one of its gold
documents, this runs every channel once inside that sub-corpus, then fuses the cached rankings
with each candidate weighting and counts the gold documents in the fused top ten. Weights are
chosen per genre (press, debates) on one fold of questions and scored on the other (questions
sharing a gold document stay in the same fold), so the reported figure is out of sample.

    python scripts/tune_warm_start.py --questions demo/historiqa/questions_dev.jsonl
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "trace_site.settings")

import django  # noqa: E402

django.setup()

from archive.models import SubCorpus  # noqa: E402
from common.document_keys import split_document_key  # noqa: E402
from common.french_dates import extract_date_window  # noqa: E402
from common.search import Hit, SearchRequest  # noqa: E402
from retrieval import channels as registry  # noqa: E402
from retrieval.fusion import rrf  # noqa: E402
from retrieval.warm_start import CHANNEL_POOL  # noqa: E402

CHANNELS = ("bm25", "dense", "substring")
GRID = {"dense": (0.0, 0.1, 0.25, 0.5, 1.0), "substring": (0.0, 0.1, 0.25, 0.5)}
TOP = 10


def rankings(question: str, slug: str) -> dict[str, list[str]]:
    """Run each channel inside one sub-corpus; return document keys in rank order."""
    request = SearchRequest(channel="bm25", query=question, sub_corpora=(slug,),
                            limit=CHANNEL_POOL)
    out = {name: [h.document_key for h in registry.get(name).search(request.with_(channel=name))]
           for name in CHANNELS}
    window = extract_date_window(question)
    if window is not None:
        temporal = registry.get("temporal").search(request.with_(channel="temporal",
                                                                 window=window))
        out["temporal"] = [h.document_key for h in temporal]
    return out


def fused_top(ranked: dict[str, list[str]], weights: dict[str, float]) -> list[str]:
    """Fuse cached rankings with RRF under the given weights; return the top documents."""
    hits = {name: [Hit(chunk_id=0, document_id=0, document_key=key, sub_corpus="", score=0.0,
                       rank=i, channel=name) for i, key in enumerate(keys, start=1)]
            for name, keys in ranked.items() if weights.get(name, 1.0) > 0}
    return [h.document_key for h in rrf(hits, weights=weights)[:TOP]]


def folds(questions: list[dict]) -> list[int]:
    """Assign each question to fold 0 or 1, keeping questions that share a gold id together."""
    parent = list(range(len(questions)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    owner: dict[str, int] = {}
    for i, q in enumerate(questions):
        for gold in q["gold_ids"]:
            if gold in owner:
                parent[find(i)] = find(owner[gold])
            else:
                owner[gold] = i
    roots = sorted({find(i) for i in range(len(questions))})
    fold_of_root = {root: n % 2 for n, root in enumerate(roots)}
    return [fold_of_root[find(i)] for i in range(len(questions))]


def main() -> None:
    """Cache the channel rankings, then choose and score weights per genre by two folds."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=Path, required=True)
    parser.add_argument("--cache", type=Path, default=None, help="JSON cache of the rankings")
    parser.add_argument("--limit", type=int, default=None)
    args = parser.parse_args()
    questions = [json.loads(line) for line in args.questions.open(encoding="utf-8")
                 if line.strip()][: args.limit]
    genre = dict(SubCorpus.objects.values_list("slug", "genre"))
    cached = json.loads(args.cache.read_text()) if args.cache and args.cache.exists() else {}
    cases = []  # (question index, genre, gold key, rankings)
    for i, q in enumerate(questions):
        for gold in q["gold_ids"]:
            slug = split_document_key(gold)[0]
            key = f"{q['qid']}|{slug}"
            if key not in cached:
                cached[key] = rankings(q["question"], slug)
            cases.append((i, genre.get(slug, "?"), gold, cached[key]))
    if args.cache:
        args.cache.write_text(json.dumps(cached))
    fold_of = folds(questions)
    grid = [dict(zip(GRID, values, strict=True)) for values in itertools.product(*GRID.values())]

    def hit_rate(weights: dict[str, float], selected: list[tuple]) -> float:
        found = sum(gold in fused_top(ranked, weights) for _, _, gold, ranked in selected)
        return found / len(selected) if selected else 0.0

    default = {"dense": 0.1, "substring": 0.0}
    print(f"{len(questions)} questions, {len(cases)} gold documents; warm start top {TOP}")
    print("| genre | default (dense 0.1) | fold-chosen weights (held-out fold) | best on all |")
    print("|---|---|---|---|")
    for name in sorted({g for _, g, _, _ in cases}):
        mine = [c for c in cases if c[1] == name]
        held_out = []
        chosen = []
        for fold in (0, 1):
            train = [c for c in mine if fold_of[c[0]] != fold]
            test = [c for c in mine if fold_of[c[0]] == fold]
            best = max(grid, key=lambda w, train=train: (hit_rate(w, train), -w["substring"],
                                                         -abs(w["dense"] - 0.1)))
            chosen.append(best)
            held_out += [gold in fused_top(ranked, best) for _, _, gold, ranked in test]
        overall = max(grid, key=lambda w, mine=mine: (hit_rate(w, mine), -w["substring"],
                                                      -abs(w["dense"] - 0.1)))
        print(f"| {name} | {hit_rate(default, mine):.3f} | "
              f"{sum(held_out) / len(held_out):.3f} ({chosen[0]}, {chosen[1]}) | "
              f"{hit_rate(overall, mine):.3f} {overall} |")


if __name__ == "__main__":
    main()
