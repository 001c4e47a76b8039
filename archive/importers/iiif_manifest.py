"""Read a IIIF Presentation manifest file (version 2 or 3): the image of each page, in order.

A manifest given at import (``manage.py ingest FOLDER --iiif-manifest FILE``) is a local file:
the server never fetches a manifest or an image, and a URL given instead is refused. Each
canvas, in the manifest's order, gives the IIIF Image API base of its first image's service
(v2: ``sequences[0].canvases[].images[0].resource.service``; v3: ``items[]`` (canvases) →
``items[0]`` (annotation page) → ``items[0].body.service``), checked as every IIIF URL is
(`archive/iiif.py`: http(s), no private or loopback host). A canvas whose ``seeAlso`` or
``rendering`` names an ``.xml`` file is that ALTO page's; otherwise canvases go to the pages of
a one-document folder by position.

Refused with a message: a file over ``MAX_MANIFEST_BYTES`` (from its size, unread), text that
is not JSON or nests too deep, a manifest of neither version, a canvas without an image service,
an image URL refused by `archive/iiif.py`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import unquote, urlsplit

from archive.iiif import iiif_url_problem
from archive.importers.records import RecordError
from archive.importers.safe_xml import check_file_size

MAX_MANIFEST_BYTES = 10_000_000
MAX_CANVASES = 20_000


@dataclass(frozen=True)
class ManifestCanvas:
    position: int  # from 1, in the manifest's order
    image: str  # the IIIF Image API base, checked
    alto: str = ""  # the file name of the ALTO page its seeAlso or rendering names, if any


def manifest_problem(value: str) -> str:
    """Say why a --iiif-manifest value is refused before it is opened ("" when it is a path)."""
    if "://" in value or value.lower().startswith(("http:", "https:")):
        return ("--iiif-manifest takes a manifest file saved beside the pages; the server never "
                f"fetches a URL ({value[:80]!r} refused)")
    return ""


def read_manifest(path: Path) -> list[ManifestCanvas]:
    """Return the canvases of the manifest file at ``path``, or raise a RecordError."""
    name = path.name
    check_file_size(path, name, MAX_MANIFEST_BYTES, lambda size: (
        f"{name}: {size:,} bytes; a manifest may hold {MAX_MANIFEST_BYTES:,}; refused unread"))
    try:
        data = json.loads(path.read_bytes())
    except (ValueError, RecursionError) as exc:
        reason = "nests too deep" if isinstance(exc, RecursionError) else f"is not JSON ({exc})"
        raise RecordError(0, f"{name}: {reason}"[:300]) from None
    if not isinstance(data, dict):
        raise RecordError(0, f"{name}: a manifest is a JSON object")
    context = json.dumps(data.get("@context", ""))
    if "presentation/3" in context or ("items" in data and "sequences" not in data):
        canvases = _list(data.get("items"))
        images = [_v3_image(canvas) for canvas in canvases]
    elif "presentation/2" in context or "sequences" in data:
        sequences = _list(data.get("sequences"))
        canvases = _list(sequences[0].get("canvases")) if sequences and isinstance(
            sequences[0], dict) else []
        images = [_v2_image(canvas) for canvas in canvases]
    else:
        raise RecordError(0, f"{name}: not a IIIF Presentation 2 or 3 manifest (no @context "
                             "naming one, no sequences or items)")
    if len(canvases) > MAX_CANVASES:
        raise RecordError(0, f"{name}: {len(canvases):,} canvases; at most {MAX_CANVASES:,}")
    found = []
    for position, (canvas, image) in enumerate(zip(canvases, images, strict=True), start=1):
        if not image:
            raise RecordError(0, f"{name}: canvas {position} has no image service (a IIIF "
                                 "Image API base is needed to show its regions)")
        image = image.removesuffix("/info.json")
        if problem := iiif_url_problem(image):
            raise RecordError(0, f"{name}: canvas {position}: {problem}")
        found.append(ManifestCanvas(position, image, _alto_name(canvas)))
    return found


def _list(value: Any) -> list:
    if isinstance(value, list):
        return value
    return [value] if isinstance(value, dict) else []


def _id(value: Any) -> str:
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, dict):
        found = value.get("id") or value.get("@id") or ""
        return found.strip() if isinstance(found, str) else ""
    return ""


def _service(resource: Any) -> str:
    if not isinstance(resource, dict):
        return ""
    return next((found for service in _list(resource.get("service"))
                 if (found := _id(service))), "")


def _v2_image(canvas: Any) -> str:
    if not isinstance(canvas, dict):
        return ""
    images = _list(canvas.get("images"))
    first = images[0] if images and isinstance(images[0], dict) else {}
    return _service(first.get("resource"))


def _v3_image(canvas: Any) -> str:
    if not isinstance(canvas, dict):
        return ""
    pages = _list(canvas.get("items"))
    annotations = _list(pages[0].get("items")) if pages and isinstance(pages[0], dict) else []
    first = annotations[0] if annotations and isinstance(annotations[0], dict) else {}
    return next((found for body in _list(first.get("body")) if (found := _service(body))), "")


def _alto_name(canvas: Any) -> str:
    if not isinstance(canvas, dict):
        return ""
    for key in ("seeAlso", "rendering"):
        for link in _list(canvas.get(key)) if not isinstance(canvas.get(key), str) else [
                canvas.get(key)]:
            address = _id(link)
            name = PurePosixPath(unquote(urlsplit(address).path)).name
            if name.lower().endswith(".xml"):
                return name
    return ""
