"""A IIIF Presentation manifest file names the pages' images at import; it is never fetched."""

from __future__ import annotations

import json

import pytest
from django.core.management import CommandError, call_command

from archive.importers import iiif_manifest
from archive.models import Document
from tests.archive import alto_samples as samples
from tests.archive.alto_samples import write

pytestmark = pytest.mark.django_db

IMAGES = "https://gallica.example.org/iiif/ark:/12148/bpt6k591"


def _v3(canvases: list[tuple[str, str]]) -> str:
    """A v3 manifest: one canvas per (image base, ALTO file named by its seeAlso or "")."""
    return json.dumps({
        "@context": "http://iiif.io/api/presentation/3/context.json", "type": "Manifest",
        "id": "https://gallica.example.org/manifest.json", "label": {"fr": ["Le Petit Journal"]},
        "items": [{
            "id": f"https://gallica.example.org/canvas/{n}", "type": "Canvas",
            **({"seeAlso": [{"id": f"https://gallica.example.org/alto/{alto}",
                             "type": "Dataset", "format": "application/xml"}]} if alto else {}),
            "items": [{"type": "AnnotationPage", "items": [{
                "type": "Annotation", "motivation": "painting",
                "body": {"id": f"{image}/full/max/0/default.jpg", "type": "Image",
                         "service": [{"id": image, "type": "ImageService3"}]}}]}],
        } for n, (image, alto) in enumerate(canvases, start=1)]})


def _v2(images: list[str]) -> str:
    return json.dumps({
        "@context": "http://iiif.io/api/presentation/2/context.json", "@type": "sc:Manifest",
        "sequences": [{"canvases": [{
            "@type": "sc:Canvas", "images": [{"resource": {
                "@id": f"{image}/full/full/0/default.jpg",
                "service": {"@id": image + "/info.json", "profile": "level1"}}}]}
            for image in images]}]})


def _pages(tmp_path, names=("page-0001.xml", "page-0002.xml")):
    folder = tmp_path / "good"
    write(folder, names[0], samples.page_one())
    write(folder, names[1], samples.page_two())
    return folder


def _images(document: Document) -> list[str]:
    return [page.image for page in document.document_layout().pages]


def _ingest(folder, manifest, *args) -> None:
    call_command("ingest", str(folder), "--no-embed", "--iiif-manifest", str(manifest), *args,
                 verbosity=0)


def test_a_v3_canvas_naming_its_alto_file_gives_that_page_its_image(tmp_path):
    folder = _pages(tmp_path)
    manifest = write(tmp_path, "manifest.json", _v3([
        (f"{IMAGES}/f2", "page-0002.xml"), (f"{IMAGES}/f1", "page-0001.xml")]))
    _ingest(folder, manifest)
    documents = {d.external_id: d for d in Document.objects.all()}
    assert _images(documents["page-0001"]) == [f"{IMAGES}/f1"]
    assert _images(documents["page-0002"]) == [f"{IMAGES}/f2"]


def test_a_v2_manifest_gives_a_one_document_folder_its_images_by_position(tmp_path):
    folder = samples.petit_journal_mets_folder(tmp_path)
    manifest = write(tmp_path, "manifest.json", _v2([f"{IMAGES}/f1", f"{IMAGES}/f2"]))
    _ingest(folder, manifest)
    assert _images(Document.objects.get()) == [f"{IMAGES}/f1", f"{IMAGES}/f2"]


@pytest.mark.parametrize("content,message", [
    (_v3([("https://10.0.0.7/iiif/f1", "page-0001.xml")]), "an internal address"),
    (_v3([("http://localhost/iiif/f1", "page-0001.xml")]), "this machine"),
    (_v3([("file:///etc/passwd", "page-0001.xml")]), "must start with http"),
    (_v2([f"{IMAGES}/f1"]), "matched by position"),
    ('<?xml version="1.0"?><!DOCTYPE m [<!ENTITY x "y">]><m>&x;</m>', "is not JSON"),
    ("[" * 200_000, "nests too deep"),
    (json.dumps({"@context": "http://example.org/other", "label": "x"}), "not a IIIF"),
    (json.dumps({"items": [{"type": "Canvas", "items": []}]}), "has no image service"),
])
def test_a_hostile_or_unusable_manifest_is_refused_and_nothing_written(tmp_path, content,
                                                                       message):
    manifest = write(tmp_path, "manifest.json", content)
    with pytest.raises(CommandError, match=message):
        _ingest(_pages(tmp_path), manifest)
    assert not Document.objects.exists()


def test_a_manifest_over_the_limit_is_refused_unread(tmp_path, monkeypatch):
    monkeypatch.setattr(iiif_manifest, "MAX_MANIFEST_BYTES", 100)
    manifest = write(tmp_path, "manifest.json", _v2([f"{IMAGES}/f1", f"{IMAGES}/f2"]))
    with pytest.raises(CommandError, match="refused unread"):
        _ingest(samples.petit_journal_mets_folder(tmp_path), manifest)
    assert not Document.objects.exists()


@pytest.mark.parametrize("address", ["https://gallica.bnf.fr/iiif/manifest.json",
                                     "http://169.254.169.254/latest/manifest"])
def test_a_manifest_url_is_refused_never_fetched(tmp_path, address):
    with pytest.raises(CommandError, match="never fetches a URL"):
        _ingest(_pages(tmp_path), address)
    assert not Document.objects.exists()
