"""Ingest is faithful, idempotent and all-or-nothing, in every supported layout."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest
from django.core.management import CommandError, call_command

from archive.embeddings.hashing import HashProvider
from archive.models import Chunk, CorpusRevision, Document, EmbeddingCache, SubCorpus
from archive.services import IngestRefused, ingest_file
from tests.archive.conftest import FULL_CORPUS, PRESS_CORPUS, require, shared_line

pytestmark = pytest.mark.django_db

ARTICLE = "Le ministre a parlé hier. La Chambre a voté la loi. " * 30


def test_ingest_creates_documents_chunks_vectors_and_bumps_the_revision(write_jsonl):
    path = write_jsonl([shared_line("18870226", ARTICLE), shared_line("18870227", "Court.")])
    report = ingest_file(path=path)
    assert (report.created, report.updated, report.unchanged) == (2, 0, 0)
    doc = Document.objects.get(external_id="18870226")
    assert doc.key == "legaulois_1887_v1:18870226"
    assert doc.sub_corpus.name == "Le Gaulois" and doc.sub_corpus.genre == "press"
    assert doc.title == "Le Gaulois, 26 février 1887"
    assert doc.date.isoformat() == "1887-02-26" and doc.date_precision == "day"
    chunks = list(doc.chunks.order_by("ordinal"))
    assert chunks and all(doc.text[c.char_start : c.char_end] == c.text for c in chunks)
    assert all(c.embedding is not None and c.embedding_model == "hash" for c in chunks)
    assert CorpusRevision.current() >= 1


def test_re_ingesting_the_same_file_changes_nothing(write_jsonl):
    path = write_jsonl([shared_line("1", ARTICLE), shared_line("2", "Autre texte.")])
    ingest_file(path=path)
    before = list(Chunk.objects.values_list("pk", "text", "char_start", "char_end"))
    revision = CorpusRevision.current()
    cache_rows = EmbeddingCache.objects.count()
    report = ingest_file(path=path)
    assert (report.created, report.updated, report.unchanged) == (0, 0, 2)
    assert report.chunks_written == 0 and report.embeddings_computed == 0
    assert list(Chunk.objects.values_list("pk", "text", "char_start", "char_end")) == before
    assert CorpusRevision.current() == revision
    assert EmbeddingCache.objects.count() == cache_rows


def test_a_changed_document_replaces_its_chunks_and_vectors(write_jsonl):
    ingest_file(path=write_jsonl([shared_line("1", ARTICLE), shared_line("2", "Stable.")]))
    old_ids = set(Chunk.objects.filter(document__external_id="1").values_list("pk", flat=True))
    stable_ids = set(Chunk.objects.filter(document__external_id="2").values_list("pk", flat=True))
    revision = CorpusRevision.current()
    report = ingest_file(
        path=write_jsonl([shared_line("1", "Un texte nouveau. Tout a changé."),
                          shared_line("2", "Stable.")], name="v2.jsonl")
    )
    assert (report.created, report.updated, report.unchanged) == (0, 1, 1)
    chunks = Chunk.objects.filter(document__external_id="1")
    assert [c.text for c in chunks] == ["Un texte nouveau. Tout a changé."]
    assert not old_ids & {c.pk for c in chunks}
    assert set(Chunk.objects.filter(document__external_id="2").values_list("pk", flat=True)) == (
        stable_ids
    )
    assert CorpusRevision.current() > revision
    assert Document.objects.count() == 2


def test_switching_provider_embeds_again_and_switching_back_reuses_the_cache(write_jsonl):
    path = write_jsonl([shared_line("1", ARTICLE)])
    ingest_file(path=path, embed=False)
    assert Chunk.objects.filter(embedding__isnull=True).count() == Chunk.objects.count()
    first = ingest_file(path=path)  # unchanged document, chunks still lack vectors
    assert first.unchanged == 1 and first.chunks_embedded == Chunk.objects.count()
    assert first.embeddings_computed == first.chunks_embedded
    # A real switch: another model's vectors replace them, the displaced ones are kept once.
    other = ingest_file(path=path, provider=OtherModel())
    assert other.chunks_embedded == Chunk.objects.count() and other.embeddings_computed > 0
    assert set(Chunk.objects.values_list("embedding_model", flat=True)) == {"other-model"}
    again = ingest_file(path=path)
    assert again.chunks_embedded == Chunk.objects.count() and again.embeddings_computed == 0
    # One copy of each vector: the ones chunks hold left the cache table.
    assert not EmbeddingCache.objects.filter(model="hash").exists()
    assert EmbeddingCache.objects.filter(model="other-model").count() == Chunk.objects.count()


class OtherModel(HashProvider):
    """A second model-free provider: the same vectors under another name, negated."""

    name = "other-model"

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        return -super().embed_passages(texts)


CORRUPTED = [
    shared_line("good1", "Bon texte."),
    '{"doc_id": "legaulois_1887_v1:x", "collection": ',
    shared_line("baddate", "Texte.", date="1887-13-45"),
    json.dumps({"collection": "legaulois_1887_v1", "source": "Le Gaulois", "text": "Sans id."}),
    json.dumps({"collection": "legaulois_1887_v1", "raw_id": "5", "source": "Le Gaulois",
                "date": "1887-01-01", "text": 42}),
    shared_line("good2", "Encore un bon texte."),
]


def test_a_corrupted_file_is_refused_by_default_with_line_numbers_and_no_rows(write_jsonl):
    path = write_jsonl(CORRUPTED)
    with pytest.raises(IngestRefused) as refused:
        ingest_file(path=path)
    message = str(refused.value)
    assert "line 2: bad JSON (Expecting value, column 49)" in message
    assert "line 3: unparsable date '1887-13-45'" in message
    assert "line 4: missing field 'raw_id'" in message
    assert "line 5: field 'text' must be a string" in message
    assert [e.line for e in refused.value.errors] == [2, 3, 4, 5]
    assert not Document.objects.exists() and not Chunk.objects.exists()
    assert not SubCorpus.objects.exists() and CorpusRevision.current() == 0


def test_the_command_exits_non_zero_with_the_errors_when_refused(write_jsonl):
    path = write_jsonl(CORRUPTED)
    with pytest.raises(CommandError, match=r"4 of 6 bad record\(s\); import refused"):
        call_command("ingest", str(path), verbosity=0)
    assert not Document.objects.exists()


def test_skip_mode_imports_the_valid_records_and_lists_the_bad_ones(write_jsonl, capsys):
    path = write_jsonl(CORRUPTED)
    call_command("ingest", str(path), "--on-error", "skip", verbosity=0)
    assert sorted(Document.objects.values_list("external_id", flat=True)) == ["good1", "good2"]
    out = capsys.readouterr().out
    assert "skipped line 3: unparsable date" in out and "2 created" in out


def test_a_duplicate_id_in_one_file_is_reported(write_jsonl):
    with pytest.raises(IngestRefused, match="line 2: duplicate document legaulois_1887_v1:1"):
        ingest_file(path=write_jsonl([shared_line("1", "A."), shared_line("1", "B.")]))


def test_debate_sections_get_section_titles_and_the_debates_genre(write_jsonl):
    text = "PRÉSIDENCE DE M. FLOQUET\n\nLa séance est ouverte.M. le président. Adopté."
    ingest_file(path=write_jsonl([shared_line(
        "1887-01-11_003_002", text, collection="debats_1887",
        source="Chambre des députés, débats parlementaires (Journal officiel)", date="1887-01-11",
    )]))
    doc = Document.objects.get()
    assert doc.sub_corpus.genre == "debates"
    assert doc.sub_corpus.name == "Chambre des députés, débats (Journal officiel)"
    assert doc.title == "Séance du 11 janvier 1887 — Présidence de M. Floquet"
    assert doc.page == "séance 3, section 2"
    assert doc.metadata == {"sitting": 3, "section": 2, "raw_title": "PRÉSIDENCE DE M. FLOQUET"}


def test_the_official_historiqa_layout_with_segments_and_partial_dates(write_jsonl):
    lines = [
        json.dumps({"collection": "debats_1887", "id": "JO-1887-02-01-s1",
                    "document": ["Premier segment.", {"text": "Second segment."}],
                    "year": 1887, "month": 2, "day": 1, "chamber": "Chambre des députés",
                    "sommaire": "Discussion du budget\nSuite"}, ensure_ascii=False),
        json.dumps({"collection": "revue_x", "id": 7, "document": "Une revue sans jour.",
                    "year": "1887", "month": "3"}),
    ]
    report = ingest_file(path=write_jsonl(lines, name="corpus_dataset.jsonl"))
    assert report.format == "historiqa" and report.created == 2
    debate = Document.objects.get(external_id="JO-1887-02-01-s1")
    assert debate.text == "Premier segment.\n\nSecond segment."
    assert debate.title == "1er février 1887: Discussion du budget"
    assert debate.metadata["chamber"] == "Chambre des députés"
    revue = Document.objects.get(external_id="7")
    assert revue.date_precision == "month" and revue.date.isoformat() == "1887-03-01"
    bad = write_jsonl([json.dumps({"collection": "c", "id": "1", "document": {"a": 1}}),
                       json.dumps({"collection": "c", "id": "2", "document": "x",
                                   "year": 1887, "month": 13})], name="bad.jsonl")
    with pytest.raises(IngestRefused) as refused:
        ingest_file(path=bad, fmt="historiqa")
    assert [e.line for e in refused.value.errors] == [1, 2]


def test_a_txt_folder_with_a_metadata_csv(tmp_path):
    folder = tmp_path / "lettres"
    folder.mkdir()
    (folder / "a.txt").write_text("Première lettre. Elle parle de Boulanger.", encoding="utf-8")
    (folder / "b.txt").write_text("Seconde lettre.", encoding="utf-8")
    csv_path = tmp_path / "meta.csv"
    csv_path.write_text(
        "filename,title,date,sub_corpus,publication,url\n"
        "a.txt,Lettre A,1887-05,correspondance,Archives privées,https://example.org/a\n",
        encoding="utf-8",
    )
    call_command("ingest", str(folder), "--metadata", str(csv_path), verbosity=0)
    a = Document.objects.get(external_id="a")
    assert (a.sub_corpus.slug, a.title, a.date_precision) == ("correspondance", "Lettre A", "month")
    assert a.url == "https://example.org/a"
    assert Document.objects.get(external_id="b").sub_corpus.slug == "lettres"
    csv_path.write_text("filename,date\na.txt,1887-13-45\n", encoding="utf-8")
    with pytest.raises(IngestRefused, match="line 2: a.txt .CSV line 2.: unparsable date"):
        ingest_file(path=folder, metadata_csv=csv_path)


def test_historiqa_press_gives_73_documents_in_2_sub_corpora_twice():
    path = require(PRESS_CORPUS)
    call_command("ingest", str(path), verbosity=0)
    assert Document.objects.count() == 73
    assert set(SubCorpus.objects.values_list("slug", flat=True)) == {
        "legaulois_1887_v1", "lintransigeant_1887_v1"
    }
    report = ingest_file(path=path)
    assert report.changed == 0 and report.unchanged == 73 and report.chunks_written == 0


def test_historiqa_gives_295_documents_in_3_sub_corpora_and_keeps_the_press_rows():
    press = require(PRESS_CORPUS)
    full = require(FULL_CORPUS)
    ingest_file(path=press)
    rows = lambda: {  # noqa: E731
        (d.pk, d.text, d.content_hash, tuple(d.chunks.values_list("pk", "char_start", "char_end")))
        for d in Document.objects.all()
    }
    press_rows = rows()
    report = ingest_file(path=full)
    assert (report.created, report.updated, report.unchanged) == (222, 0, 73)
    assert Document.objects.count() == 295
    counts = {sc.slug: sc.documents.count() for sc in SubCorpus.objects.all()}
    assert counts == {"legaulois_1887_v1": 78, "lintransigeant_1887_v1": 79, "debats_1887": 138}
    assert press_rows <= rows()
    assert SubCorpus.objects.get(slug="debats_1887").genre == "debates"
    assert ingest_file(path=full).changed == 0


def test_debate_sections_without_a_heading_take_their_item_heading_and_speaker(write_jsonl):
    source = "Chambre des députés, débats parlementaires (Journal officiel)"
    heading = "SUITE DE LA DISCUSSION DU BUDGET M. le président. L'ordre du jour appelle la suite."
    ingest_file(path=write_jsonl([
        shared_line("1887-01-18_006_000", heading, collection="debats_1887", source=source,
                    date="1887-01-18"),
        shared_line("1887-01-18_006_015", "M. Bourneville. Messieurs, l'amendement que nous",
                    collection="debats_1887", source=source, date="1887-01-18"),
        shared_line("1887-01-25_006_003", "M. le rapporteur nous dit quecettei~mentation, à",
                    collection="debats_1887", source=source, date="1887-01-25"),
        shared_line("1887-03-22_1_020_004", "M. Mérillon. Eh bien(tirez-en la conséquence",
                    collection="debats_1887", source=source, date="1887-03-22"),
    ]))
    titles = dict(Document.objects.values_list("external_id", "title"))
    assert titles == {
        "1887-01-18_006_000": "Séance du 18 janvier 1887 — Suite de la discussion du budget",
        "1887-01-18_006_015": "Séance du 18 janvier 1887 — Suite de la discussion du budget "
                              "(section 15, M. Bourneville)",
        "1887-01-25_006_003": "Séance du 25 janvier 1887, section 3",
        "1887-03-22_1_020_004": "Séance du 22 mars 1887, section 4 — M. Mérillon",
    }
    raw = Document.objects.get(external_id="1887-01-25_006_003").metadata["raw_title"]
    assert raw == "M. le rapporteur nous dit quecettei~mentation, à"


def test_retitle_gives_stored_sections_the_titles_of_a_fresh_import():
    path = require(FULL_CORPUS)
    ingest_file(path=path, embed=False)
    fresh = dict(Document.objects.values_list("pk", "title"))
    debates = Document.objects.filter(sub_corpus__slug="debats_1887")
    # As an earlier import stored them: OCR noise as title, no raw title.
    for document in debates:
        document.title = f"Séance: {document.text[:60]}"
        document.metadata = {k: v for k, v in document.metadata.items() if k != "raw_title"}
        document.content_hash = "old"
        document.save()
    out = io.StringIO()
    call_command("retitle", stdout=out)
    assert out.getvalue().strip() == f"{debates.count()} debate section(s) retitled."
    assert dict(Document.objects.values_list("pk", "title")) == fresh
    assert [d.external_id for d in debates.all() if "raw_title" not in d.metadata] == []
    assert ingest_file(path=path, embed=False).changed == 0
    readable = sum(" — " in title for title in debates.values_list("title", flat=True))
    assert readable >= 0.75 * debates.count()
