"""The review page's timeline: accepted and held sources placed by date and sub-corpus, each
marker an area linking to its source, undated sources counted, titles escaped."""

from __future__ import annotations

import base64
import html
import io
import re
from urllib.parse import parse_qs, urlsplit

import pytest
from django.urls import reverse
from PIL import Image

from agent.review import services as review_services
from archive.models import Document

pytestmark = pytest.mark.django_db

AREA = re.compile(r'<area shape="circle" coords="(\d+),(\d+),(\d+)" href="([^"]+)" '
                  r'title="([^"]*)" alt="[^"]*" data-document="([^"]+)" data-state="(\w+)">')


def _timeline(client, investigation) -> tuple[str, Image.Image | None, list[tuple]]:
    page = client.get(reverse("investigation_review", args=[investigation.pk])).content.decode()
    section = re.search(r'<section id="timeline".*?</section>', page, re.S)
    assert section, "the review page has a timeline"
    found = re.search(r'src="data:image/png;base64,([^"]+)"', section.group())
    image = Image.open(io.BytesIO(base64.b64decode(found.group(1)))) if found else None
    return section.group(), image, AREA.findall(section.group())


def test_each_accepted_or_held_dated_source_is_a_marker_linked_to_it(client, users, finished):
    client.force_login(users["alice"])
    keys = finished.ranked_keys
    review_services.verdict_override(investigation=finished, user=users["alice"],
                                     document_key=keys[-1],
                              decision="hold", note="")
    section, image, areas = _timeline(client, finished)
    assert image is not None and image.format == "PNG"
    assert {(key, state) for *_, key, state in areas} == {
        *((key, "accepted") for key in keys[:-1]), (keys[-1], "held")}
    documents = {d.key: d for d in Document.objects.select_related("sub_corpus")}
    rgb = image.convert("RGB")
    for x, y, _, href, title, key, state in areas:
        link = urlsplit(html.unescape(href))
        assert link.path == reverse("open_source", args=[finished.pk])
        assert parse_qs(link.query)["doc"] == [key]
        document = documents[key]
        assert html.unescape(title) == f"{document.title} ({document.date.isoformat()}, {state})"
        # The area sits on the marker matplotlib drew: green fill for accepted, an orange
        # outline around a hollow diamond for held.
        pixels = [rgb.getpixel((int(x) + dx, int(y) + dy))
                  for dx in range(-6, 7) for dy in range(-6, 7)]
        if state == "accepted":
            assert rgb.getpixel((int(x), int(y)))[:3] == (0x2f, 0x7d, 0x32)
        else:
            assert any(r > 150 and 60 < g < 150 and b < 60 for r, g, b in pixels)
    # Markers of later dates sit further right.
    by_date = sorted(areas, key=lambda a: documents[a[5]].date)
    assert [int(a[0]) for a in by_date] == sorted(int(a[0]) for a in by_date)


def test_rejected_sources_leave_it_and_undated_ones_are_counted(client, users, finished):
    client.force_login(users["alice"])
    first, *others = finished.ranked_keys
    review_services.verdict_override(investigation=finished, user=users["alice"],
                                     document_key=first,
                              decision="reject", note="")
    undated = others[0]
    slug, external_id = undated.split(":", 1)
    Document.objects.filter(sub_corpus__slug=slug, external_id=external_id).update(
        date=None, title='<img src=x onerror="alert(1)"> & co')
    section, _, areas = _timeline(client, finished)
    assert {key for *_, key, _ in areas} == set(others[1:])
    assert "1 undated source left off the timeline." in section
    assert "<img src=x" not in section


def test_an_unchanged_review_reuses_its_drawing(client, users, finished, monkeypatch):
    from agent.review import timeline

    client.force_login(users["alice"])
    calls = []
    draw = timeline._draw
    monkeypatch.setattr(timeline, "_draw", lambda points: calls.append(1) or draw(points))
    timeline.cache.clear()
    first = _timeline(client, finished)[0]
    assert _timeline(client, finished)[0] == first and len(calls) == 1
    review_services.verdict_override(investigation=finished, user=users["alice"],
                              document_key=finished.ranked_keys[0], decision="hold", note="")
    assert _timeline(client, finished)[0] != first and len(calls) == 2


@pytest.mark.parametrize("days", [[0], [0, 1], [0, 40], [0, 4000], [0, 40000]])
def test_any_span_of_dates_is_drawn_without_a_locator_warning(days):
    import datetime as dt
    import warnings

    from agent.review.timeline import TimelinePoint, _draw

    points = [TimelinePoint(f"k{i}", "t", dt.date(1887, 2, 20) + dt.timedelta(days=d), "Le Gaulois",
                            "accepted", "/x") for i, d in enumerate(days)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        png, width, height, areas = _draw(points)
    assert png.startswith(b"\x89PNG") and len(areas) == len(days)
    assert all(0 < a.x < width and 0 < a.y < height for a in areas)
    assert areas[0].x < areas[-1].x or len(days) == 1


def test_thirty_sources_stay_apart_and_a_crowded_day_is_one_counted_marker():
    import datetime as dt
    import math

    from PIL import Image

    from agent.review.timeline import MARKER_RADIUS_PX, TimelinePoint, _draw, _groups

    start = dt.date(1887, 2, 1)
    # 30 sources of one sub-corpus on 24 days in a row, six of them on 10 February, and a few
    # held ones among them: as many markers as the review of a long run shows.
    days = [*range(24), *([9] * 5), 30]
    points = [TimelinePoint(f"gaulois:{i}", f"Le Gaulois n° {i}", start + dt.timedelta(days=d),
                            "Le Gaulois", "held" if i % 7 == 3 and i < 24 else "accepted",
                            f"/s/{i}")
              for i, d in enumerate(days)]
    groups = _groups(points)
    crowded = [g for g in groups if g.count > 1]
    assert [(g.day, g.state, g.count) for g in crowded] == [(dt.date(1887, 2, 10), "accepted", 6)]
    png, width, height, areas = _draw(points)
    assert len(areas) == len(groups) == len(points) - 5
    # No two markers touch: their centres are a marker's width apart, at least.
    for a, b in ((a, b) for i, a in enumerate(areas) for b in areas[i + 1:]):
        assert math.dist((a.x, a.y), (b.x, b.y)) >= 1.5 * MARKER_RADIUS_PX, (a, b)
    counted = next(a for a in areas if a.title.startswith("6 accepted sources on 1887-02-10"))
    assert all(f"Le Gaulois n° {i}" in counted.title for i, d in enumerate(days) if d == 9)
    # The count is drawn beside its marker: dark pixels to its right, none beside a lone one.
    image = Image.open(io.BytesIO(png)).convert("L")
    assert image.size == (width, height)

    def dark_beside(area) -> int:
        return sum(1 for dx in range(MARKER_RADIUS_PX + 1, MARKER_RADIUS_PX + 10)
                   for dy in range(-4, 5) if image.getpixel((area.x + dx, area.y + dy)) < 90)

    assert dark_beside(counted) > 3
    lone = next(a for a in areas if a.title.startswith("Le Gaulois n° 29 "))
    assert dark_beside(lone) == 0
