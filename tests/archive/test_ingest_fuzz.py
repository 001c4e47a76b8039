"""Fuzzing ingest: malformed records mixed with good ones never half-write, in either mode."""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path

import pytest

from archive import importers
from archive.models import Chunk, CorpusRevision, Document, SubCorpus
from archive.services import IngestFailed, IngestRefused, ingest_file
from tests.archive.conftest import shared_line

pytestmark = pytest.mark.django_db

GOOD_COUNT = 300
BAD_COUNT = 1100


def _good(i: int) -> str:
    collection = ("legaulois_1887_v1", "lintransigeant_1887_v1")[i % 2]
    return shared_line(f"good-{i}", f"Article {i}. La Chambre a voté le budget, disait-on.",
                       collection=collection, date=f"1887-{1 + i % 12:02d}-{1 + i % 28:02d}")


def _row(raw_id: str, text: str = "Un texte.", **fields) -> dict:
    row = {"collection": "legaulois_1887_v1", "source": "Le Gaulois", "raw_id": raw_id,
           "date": "1887-02-26", "text": text}
    row.update(fields)
    return row


def _escaped(row: dict) -> bytes:
    # ensure_ascii writes NULs and lone surrogates as \u escapes, as a real export would.
    return json.dumps(row, ensure_ascii=True).encode("ascii")


# Every kind of malformed record, each a function of a unique number giving the line's bytes.
MALFORMED = {
    "nul in text": lambda n: _escaped(_row(f"b{n}", "avant\u0000après")),
    "nul in raw_id": lambda n: _escaped(_row(f"b{n}\u0000x")),
    "nul in source": lambda n: _escaped(_row(f"b{n}", source="Le\u0000Gaulois")),
    "lone high surrogate in text": lambda n: _escaped(_row(f"b{n}", "caf\ud83d.")),
    "lone low surrogate in raw_id": lambda n: _escaped(_row(f"b{n}\udc80")),
    "surrogate in collection": lambda n: _escaped(_row(f"b{n}", collection="gaulois\ud800")),
    "400-char raw_id": lambda n: _escaped(_row(f"b{n}-" + "x" * 400)),
    "153-char collection": lambda n: _escaped(_row(f"b{n}", collection="c" * 153)),
    "collection that is no slug": lambda n: _escaped(_row(f"b{n}", collection="Le Temps 1887")),
    "collection with an accent": lambda n: _escaped(_row(f"b{n}", collection="débats")),
    "key over 400 characters": lambda n: _escaped(
        _row(f"b{n}-" + "k" * (298 - len(str(n))), collection="d" * 100)),
    "source over 300 characters": lambda n: _escaped(_row(f"b{n}", source="S" * 350)),
    "new sub-corpus named over 200 characters": lambda n: _escaped(
        _row(f"b{n}", collection="revue_inconnue", source="S" * 250)),
    "invalid UTF-8": lambda n: b'{"collection": "legaulois_1887_v1", "raw_id": "b%d", '
                               b'"text": "caf\xe9 \xff"}' % n,
    "truncated UTF-8 sequence": lambda n: _escaped(_row(f"b{n}"))[:-3] + b'\xc3"}',
    "truncated JSON": lambda n: _escaped(_row(f"b{n}"))[:25],
    "not an object": lambda n: b'["legaulois_1887_v1", "b%d"]' % n,
    "deep nesting": lambda n: b"[" * (5000 + n),
    "huge number": lambda n: b'{"raw_id": ' + b"9" * (5000 + n) + b"}",
    "missing raw_id": lambda n: _escaped({"collection": "legaulois_1887_v1", "text": f"t{n}"}),
    "empty text": lambda n: _escaped(_row(f"b{n}", "   ")),
    "text not a string": lambda n: _escaped(_row(f"b{n}", n)),
    "impossible date": lambda n: _escaped(_row(f"b{n}", date="1887-02-30")),
    "doc_id disagreeing": lambda n: _escaped(_row(f"b{n}", doc_id="legaulois_1887_v1:other")),
    "duplicate of a good record": lambda n: _good(n % GOOD_COUNT).encode(),
}


def fuzz_file(path: Path, seed: int) -> tuple[set[str], list[int], Counter]:
    """Write good and malformed lines in random order: (good ids, bad line numbers, kinds)."""
    rng = random.Random(seed)
    kinds = [list(MALFORMED)[i % len(MALFORMED)] for i in range(BAD_COUNT)]
    entries = [("good", i) for i in range(GOOD_COUNT)] + [(k, i) for i, k in enumerate(kinds)]
    rng.shuffle(entries)
    lines: list[bytes] = []
    bad_lines: list[int] = []
    used: Counter = Counter()
    seen: set[int] = set()
    for kind, i in entries:
        if rng.random() < 0.05:
            lines.append(b"   " if rng.random() < 0.5 else b"")  # blank lines are not records
        if kind in ("good", "duplicate of a good record"):
            # Whichever copy of a good record comes second is the duplicate.
            number = i if kind == "good" else i % GOOD_COUNT
            lines.append(_good(number).encode())
            if number not in seen:
                seen.add(number)
                continue
            kind = "duplicate of a good record"
        else:
            lines.append(MALFORMED[kind](i))
        bad_lines.append(len(lines))
        used[kind] += 1
    ended = [ln + (b"\r\n" if rng.random() < 0.2 else b"\n") for ln in lines]
    path.write_bytes(b"\xef\xbb\xbf" + b"".join(ended))
    return {f"good-{i}" for i in range(GOOD_COUNT)}, bad_lines, used


@pytest.fixture
def fuzzed(tmp_path):
    path = tmp_path / "fuzz.jsonl"
    good, bad_lines, used = fuzz_file(path, seed=1887)
    assert len(bad_lines) >= 1000 and set(used) == set(MALFORMED)
    return path, good, bad_lines


def _rows() -> tuple[int, int, int]:
    return Document.objects.count(), Chunk.objects.count(), SubCorpus.objects.count()


def test_refuse_writes_nothing_and_names_every_bad_line(fuzzed):
    path, good, bad_lines = fuzzed
    revision = CorpusRevision.current()
    with pytest.raises(IngestRefused) as refused:
        ingest_file(path=path, on_error="refuse")
    assert [e.line for e in refused.value.errors] == bad_lines
    assert f"{len(bad_lines)} of {len(bad_lines) + len(good)} bad record(s)" in str(refused.value)
    assert _rows() == (0, 0, 0)
    assert CorpusRevision.current() == revision


def test_skip_writes_exactly_the_good_records_and_counts_add_up(fuzzed):
    path, good, bad_lines = fuzzed
    report = ingest_file(path=path, on_error="skip")
    assert set(Document.objects.values_list("external_id", flat=True)) == good
    assert Document.objects.count() == len(good)
    assert Chunk.objects.filter(embedding__isnull=True).count() == 0
    assert [e.line for e in report.errors] == bad_lines
    assert (report.read, len(report.errors), report.lines) == (
        len(good), len(bad_lines), len(good) + len(bad_lines))
    assert report.created + report.updated + report.unchanged == report.read
    assert f"{report.lines} records in the input" in report.summary()
    assert set(SubCorpus.objects.values_list("slug", flat=True)) == {
        "legaulois_1887_v1", "lintransigeant_1887_v1"}


def test_each_kind_of_bad_record_is_named(tmp_path):
    messages = {}
    for kind, make in MALFORMED.items():
        if kind == "duplicate of a good record":
            continue
        path = tmp_path / "one.jsonl"
        path.write_bytes(_good(0).encode() + b"\n" + make(7) + b"\n")
        with pytest.raises(IngestRefused) as refused:
            ingest_file(path=path)
        [error] = refused.value.errors
        assert error.line == 2, kind
        messages[kind] = error.message
    assert "NUL character" in messages["nul in text"]
    assert "lone surrogate (U+D83D)" in messages["lone high surrogate in text"]
    assert "external_id has 403 characters; at most 300" in messages["400-char raw_id"]
    assert "collection has 153 characters; at most 100" in messages["153-char collection"]
    assert "'Le Temps 1887' is not an identifier" in messages["collection that is no slug"]
    assert "'le_temps_1887'" in messages["collection that is no slug"]
    assert messages["invalid UTF-8"].startswith("not UTF-8 text")
    assert "allow at most 400" in messages["key over 400 characters"]
    assert messages["deep nesting"] == "bad JSON (nested too deeply)"
    assert not Document.objects.exists()


def test_a_byte_order_mark_keeps_the_first_record(tmp_path):
    path = tmp_path / "bom.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + _good(1).encode() + b"\n" + _good(2).encode() + b"\n")
    report = ingest_file(path=path)
    assert (report.lines, report.read, report.created) == (2, 2, 2)


def test_historiqa_metadata_that_storage_refuses_is_refused(tmp_path):
    path = tmp_path / "corpus_dataset.jsonl"
    rows = [{"collection": "revue", "id": "1", "document": "Bon.", "note": "ok"},
            {"collection": "revue", "id": "2", "document": "Texte.", "score": float("nan")},
            {"collection": "revue", "id": "3", "document": "Texte.", "extra": {"k\u0000": 1}},
            {"collection": "revue", "id": "4", "document": "Texte.", "page": "p" * 101}]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    report = ingest_file(path=path, fmt="historiqa", on_error="skip")
    assert list(Document.objects.values_list("external_id", flat=True)) == ["1"]
    assert [e.line for e in report.errors] == [2, 3, 4]
    assert "metadata.score is nan" in report.errors[0].message
    assert "NUL character" in report.errors[1].message
    assert "page has 101 characters; at most 100" in report.errors[2].message


@pytest.fixture
def unchecked(monkeypatch):
    """Let records through unchecked, so the database itself refuses them mid-import."""
    monkeypatch.setattr(importers, "record_problems", lambda record: [])


UNSTORABLE_TEXTS = pytest.mark.parametrize("text", ["avant\u0000après", "caf\udce9"],
                                           ids=["nul", "surrogate"])


def _mid_import_failure(tmp_path, text: str) -> Path:
    lines = [_good(i) for i in range(60)]
    lines.insert(55, json.dumps(_row("unstorable", text)))
    path = tmp_path / "late-failure.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@UNSTORABLE_TEXTS
def test_refuse_rolls_back_a_database_error_after_earlier_batches(tmp_path, unchecked, text):
    ingest_file(path=_seed(tmp_path))
    before, revision = _rows(), CorpusRevision.current()
    with pytest.raises(IngestFailed, match="rolled back and nothing was written"):
        ingest_file(path=_mid_import_failure(tmp_path, text), batch_size=25)
    assert _rows() == before
    assert CorpusRevision.current() == revision


@UNSTORABLE_TEXTS
def test_skip_writes_the_good_records_around_a_database_error(tmp_path, unchecked, text):
    report = ingest_file(path=_mid_import_failure(tmp_path, text), on_error="skip", batch_size=25)
    assert Document.objects.count() == 60 and report.read == 60
    assert [e.line for e in report.errors] == [56]
    assert report.errors[0].message.startswith("refused by the database")
    assert report.lines == 61


def _seed(tmp_path) -> Path:
    path = tmp_path / "seed.jsonl"
    path.write_text(shared_line("seed", "Déjà là.") + "\n", encoding="utf-8")
    return path
