"""Scans that know what they are: METS/MODS publication and pages, command-line defaults."""

from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command

from archive.locators import page_locator
from archive.models import Document
from archive.services import ingest_file
from tests.archive import alto_samples as samples
from tests.archive.alto_samples import PAGE_TWO_TEXT, write

pytestmark = pytest.mark.django_db


def _mets_folder(tmp_path, **mets) -> None:
    folder = tmp_path / "good"
    write(folder, "alto/0001.xml", samples.page_one())
    write(folder, "alto/0002.xml", samples.page_two())
    write(folder, "issue_mets.xml", samples.mets_xml(
        objid="bpt6k591", title="Supplément illustré", date="1887-02-26",
        files=[("ALTO1", "alto/0001.xml"), ("ALTO2", "alto/0002.xml")],
        order=["ALTO1", "ALTO2"], **mets))
    return folder


def test_the_mods_host_and_page_labels_describe_the_document(tmp_path):
    ingest_file(path=_mets_folder(tmp_path, host="Le Petit Journal", labels=["5", "6"]),
                embed=False)
    document = Document.objects.get()
    assert (document.title, document.publication, document.page) == (
        "Supplément illustré", "Le Petit Journal", "5-6")
    # Its second scan is its page 6: the locator of a passage there says so.
    start = document.text.index(PAGE_TWO_TEXT)
    assert page_locator(document, start, start + 20) == "6"
    assert page_locator(document, 0, start + 20) == "5-6"


def test_a_mods_extent_wins_over_the_labels(tmp_path):
    ingest_file(path=_mets_folder(tmp_path, extent=("12", "13"), labels=["i", "ii"]),
                embed=False)
    document = Document.objects.get()
    assert document.page == "12-13" and document.title == "Supplément illustré, 26 février 1887"
    assert document.publication == "Supplément illustré"


def test_labels_that_are_not_numbers_give_no_pages(tmp_path):
    ingest_file(path=_mets_folder(tmp_path, labels=["[1]", "2"]), embed=False)
    document = Document.objects.get()
    assert document.page == ""
    assert page_locator(document, document.text.index(PAGE_TWO_TEXT), len(document.text)) == "2"


def test_the_command_line_names_the_sub_corpus_genre_and_title(tmp_path):
    folder = tmp_path / "good"
    write(folder, "page-0001.xml", samples.page_one())
    write(folder, "page-0002.xml", samples.page_two())
    call_command("ingest", str(folder), "--no-embed", "--sub-corpus", "Débats de la Chambre",
                 "--genre", "debates", "--title", "Journal officiel", verbosity=0)
    documents = Document.objects.select_related("sub_corpus").order_by("external_id")
    assert [(d.sub_corpus.slug, d.sub_corpus.name, d.sub_corpus.genre, d.title)
            for d in documents] == [
        ("debats_de_la_chambre", "Débats de la Chambre", "debates",
         "Journal officiel (page-0001)"),
        ("debats_de_la_chambre", "Débats de la Chambre", "debates",
         "Journal officiel (page-0002)")]


def test_a_csv_keeps_its_own_values_and_takes_the_defaults_for_the_rest(tmp_path):
    folder = tmp_path / "good"
    write(folder, "p1.xml", samples.page_one())
    write(folder, "p2.xml", samples.page_two())
    csv_path = write(tmp_path, "pages.csv", (
        "filename,date,sub_corpus,title\n"
        "p1.xml,1887-02-26,gaulois,Le Gaulois du matin\n"
        "p2.xml,1887-02-27,,\n"))
    call_command("ingest", str(folder), "--no-embed", "--metadata", str(csv_path),
                 "--sub-corpus", "Le Petit Journal", "--genre", "press", "--title",
                 "Le Petit Journal", verbosity=0)
    one, two = Document.objects.select_related("sub_corpus").order_by("external_id")
    assert (one.sub_corpus.slug, one.title) == ("gaulois", "Le Gaulois du matin")
    assert one.sub_corpus.name != "Le Petit Journal"
    assert (two.sub_corpus.slug, two.sub_corpus.name, two.sub_corpus.genre, two.title) == (
        "le_petit_journal", "Le Petit Journal", "press",
        "Le Petit Journal, 27 février 1887 (p2)")


@pytest.mark.parametrize("args,message", [
    (["--genre", "poetry"], "--genre must be one of debates, other, press"),
])
def test_bad_defaults_are_refused_before_anything_is_read(tmp_path, args, message):
    folder = tmp_path / "good"
    write(folder, "p1.xml", samples.page_one())
    with pytest.raises(CommandError, match=message):
        call_command("ingest", str(folder), "--no-embed", *args, verbosity=0)
    assert not Document.objects.exists()


def test_defaults_are_refused_for_a_jsonl_file(tmp_path, write_jsonl):
    from tests.archive.conftest import shared_line

    path = write_jsonl([shared_line("18870226", "Un texte.")])
    with pytest.raises(CommandError, match="describe a folder of ALTO pages"):
        call_command("ingest", str(path), "--no-embed", "--title", "X", verbosity=0)
