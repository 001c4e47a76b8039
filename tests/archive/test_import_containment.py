"""An import reads only regular files inside the folder given: links and outside references are
refused with the file named, and nothing of them is written."""

from __future__ import annotations

import pytest

from archive.models import Document
from archive.services import IngestRefused, ingest_file
from tests.archive import alto_samples as samples
from tests.archive.alto_samples import PAGE_ONE_TEXT, PAGE_TWO_TEXT, line_of, write

pytestmark = pytest.mark.django_db

SECRET = "Le mot de passe du coffre est Marengo."


def _secret_page(tmp_path):
    """A valid ALTO page outside the imported folder: its words must never be imported."""
    return write(tmp_path / "elsewhere", "secret.xml", samples.page_two())


def test_an_alto_folder_without_mets_refuses_a_link_to_a_page_outside(tmp_path):
    folder = tmp_path / "pages"
    write(folder, "0001.xml", samples.page_one())
    (folder / "0002.xml").symlink_to(_secret_page(tmp_path))
    with pytest.raises(IngestRefused, match=r"0002\.xml: a symbolic link; only regular files "
                                            r"inside the folder are imported"):
        ingest_file(path=folder, fmt="alto")
    assert not Document.objects.exists()
    report = ingest_file(path=folder, fmt="alto", on_error="skip")
    assert report.created == 1 and len(report.errors) == 1
    assert list(Document.objects.values_list("text", flat=True)) == [PAGE_ONE_TEXT]


def test_a_link_to_a_page_of_the_folder_itself_is_refused_too(tmp_path):
    folder = tmp_path / "pages"
    write(folder, "0001.xml", samples.page_one())
    (folder / "copy.xml").symlink_to(folder / "0001.xml")
    with pytest.raises(IngestRefused, match=r"copy\.xml: a symbolic link"):
        ingest_file(path=folder, fmt="alto")
    assert not Document.objects.exists()


def test_a_txt_folder_refuses_a_link_to_a_file_outside(tmp_path):
    folder = tmp_path / "notes"
    write(folder, "a.txt", "Séance du 3 mars 1887. La Chambre vote le budget.")
    write(tmp_path, "secret.txt", SECRET)
    (folder / "b.txt").symlink_to(tmp_path / "secret.txt")
    with pytest.raises(IngestRefused, match=r"b\.txt: a symbolic link"):
        ingest_file(path=folder, fmt="txt")
    ingest_file(path=folder, fmt="txt", on_error="skip")
    assert not Document.objects.filter(text__contains="Marengo").exists()
    assert Document.objects.count() == 1


@pytest.mark.parametrize("href", ["../../etc/passwd", "file:///etc/passwd", "/etc/passwd",
                                  "images/../../../outside.jp2", "file:../secret.txt"])
def test_a_mets_reference_outside_the_folder_is_refused_with_its_name(tmp_path, href):
    folder = samples.petit_journal_mets_folder(tmp_path)
    mets = (folder / "18870226_mets.xml").read_text(encoding="utf-8")
    mets = mets.replace('xlink:href="images/0001.jp2"', f'xlink:href="{href}"')
    write(folder, "18870226_mets.xml", mets)
    with pytest.raises(IngestRefused) as refused:
        ingest_file(path=folder, fmt="alto")
    line = line_of(mets, f'xlink:href="{href}"')
    assert (f"line {line}: 18870226_mets.xml: file {href!r} is outside the imported folder; "
            "refused, nothing read") in str(refused.value)
    assert not Document.objects.exists()


def test_a_mets_page_reached_through_a_linked_folder_is_refused(tmp_path):
    folder = samples.petit_journal_mets_folder(tmp_path)
    outside = tmp_path / "outside_pages"
    (folder / "alto").rename(outside)
    (folder / "alto").symlink_to(outside, target_is_directory=True)
    with pytest.raises(IngestRefused) as refused:
        ingest_file(path=folder, fmt="alto")
    assert ("18870226_mets.xml: page 'alto/0002.xml' is reached through the symbolic link alto; "
            "refused, nothing read") in str(refused.value)
    assert not Document.objects.exists()


def test_a_mets_folder_with_its_images_named_inside_still_imports(tmp_path):
    folder = samples.petit_journal_mets_folder(tmp_path)  # its images/*.jp2 are named, absent
    report = ingest_file(path=folder, fmt="alto")
    assert (report.created, report.errors) == (1, [])
    assert PAGE_TWO_TEXT.split()[0] in Document.objects.get().text


def test_a_metadata_csv_with_an_unterminated_quote_is_refused_with_its_line(tmp_path):
    folder = tmp_path / "notes"
    write(folder, "a.txt", "Séance du 3 mars 1887. La Chambre vote le budget.")
    csv_file = write(tmp_path, "meta.csv", 'filename,title\na.txt,"Séance du 3 mars\n')
    with pytest.raises(IngestRefused,
                       match=r"meta\.csv: unreadable CSV \(unexpected end of data\)"):
        ingest_file(path=folder, fmt="txt", metadata_csv=csv_file)
    assert not Document.objects.exists()
