"""The review page's timeline: accepted and held sources on a time axis, one row per sub-corpus.

matplotlib draws it as a PNG (shown inline as a ``data:`` image, which the page's CSP allows);
the links to the sources are an HTML image map whose areas sit where matplotlib put each
marker, so the image holds no markup and every title stays escaped by the template. Sources
without a date are not placed: the page says how many were left off.

Sources of one sub-corpus on one day in one state are one marker carrying their count (the
page lists those days with a link to each source); markers of nearby days that would touch are
set apart on lanes within their row, so thirty or more sources stay readable.

A drawing is kept in the default cache under the hash of everything it shows (dates, rows,
states, titles, links), so an unchanged review redraws nothing and any change of state redraws.
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import io
import json
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from django.core.cache import cache

from agent.sources import FoldedSource, SourceState

DPI = 100
WIDTH_INCHES = 9.0
ROW_INCHES = 0.9
MARKER_RADIUS_PX = 8
PLOT_PX = 600  # the plot area's width, about: the figure less the row names and the legend
MAX_LANES = 5  # markers of one row set apart on at most this many lanes
LANE_STEP = 0.19  # a lane's offset from the row's line, in rows (a marker's height apart)
CACHE_SECONDS = 24 * 3600
# One look per state: accepted filled, held hollow (readable without colour).
STYLES: dict[str, dict[str, Any]] = {
    SourceState.ACCEPTED: {"marker": "o", "facecolors": "#2f7d32", "edgecolors": "#1b4d1e",
                           "label": "accepted"},
    SourceState.HELD: {"marker": "D", "facecolors": "none", "edgecolors": "#b26a00",
                       "label": "held"},
}


@dataclass(frozen=True)
class TimelinePoint:
    key: str
    title: str
    day: dt.date
    row: str  # the sub-corpus's name
    state: str
    href: str


@dataclass(frozen=True)
class TimelineArea:
    """One marker's clickable circle on the image, in its pixels."""

    x: int
    y: int
    radius: int
    href: str
    title: str
    state: str
    key: str


@dataclass(frozen=True)
class TimelineGroup:
    """Several sources of one sub-corpus, one day and one state: one marker with their count."""

    day: dt.date
    row: str
    state: str
    points: tuple[TimelinePoint, ...]

    @property
    def count(self) -> int:
        return len(self.points)


@dataclass(frozen=True)
class Timeline:
    image: str  # a data: URL of the PNG
    width: int
    height: int
    areas: tuple[TimelineArea, ...]
    placed: int
    undated: int
    groups: tuple[TimelineGroup, ...] = ()  # the markers standing for several sources


def timeline_points(sources: Sequence[FoldedSource], link: Callable[[FoldedSource], str]
                    ) -> tuple[list[TimelinePoint], int]:
    """The accepted and held sources with a date, and how many others had none."""
    points, undated = [], 0
    for source in sources:
        if source.state not in STYLES:
            continue
        document = source.document
        if document is None or document.date is None:
            undated += 1
            continue
        points.append(TimelinePoint(
            key=source.document_key, title=document.title or source.document_key,
            day=document.date, row=document.sub_corpus.name, state=source.state,
            href=link(source)))
    return points, undated


def source_timeline(sources: Sequence[FoldedSource], link: Callable[[FoldedSource], str]
                    ) -> Timeline | None:
    """Draw the timeline of ``sources`` (None when none of them is accepted or held)."""
    points, undated = timeline_points(sources, link)
    if not points and not undated:
        return None
    if not points:
        return Timeline("", 0, 0, (), 0, undated)
    groups = tuple(group for group in _groups(points) if group.count > 1)
    payload = json.dumps([asdict(p) for p in points], default=str, sort_keys=True)
    cache_key = "timeline:" + hashlib.sha256(payload.encode()).hexdigest()
    drawn = cache.get(cache_key)
    if drawn is None:
        drawn = _draw(points)
        cache.set(cache_key, drawn, CACHE_SECONDS)
    png, width, height, areas = drawn
    return Timeline("data:image/png;base64," + base64.b64encode(png).decode("ascii"),
                    width, height, tuple(areas), len(points), undated, groups)


def _groups(points: list[TimelinePoint]) -> list[TimelineGroup]:
    """Gather the points by sub-corpus, day and state, in that order."""
    found: dict[tuple[str, dt.date, str], list[TimelinePoint]] = {}
    for point in sorted(points, key=lambda p: (p.row, p.day, p.state, p.key)):
        found.setdefault((point.row, point.day, point.state), []).append(point)
    return [TimelineGroup(day, row, state, tuple(members))
            for (row, day, state), members in found.items()]


def _lanes(xs: list[float], gap: float) -> list[int]:
    """Give each of a row's markers (sorted by x) a lane so that no two on a lane touch.

    Lanes are tried in the order 0, 1, -1, 2, -2 ...; past the last, a marker takes the lane
    whose last marker is furthest left.
    """
    order = [0]
    for step in range(1, MAX_LANES // 2 + 1):
        order += [step, -step]
    order = order[:MAX_LANES]
    last: dict[int, float] = {}
    lanes = []
    for x in xs:
        free = next((lane for lane in order if lane not in last or x - last[lane] >= gap), None)
        if free is None:
            free = min(order, key=lambda lane: last[lane])
        last[free] = x
        lanes.append(free)
    return lanes


def _short(name: str, limit: int = 38) -> str:
    return name if len(name) <= limit else name[:limit - 1].rstrip() + "…"


def _draw(points: list[TimelinePoint]) -> tuple[bytes, int, int, list[TimelineArea]]:
    # deferred: importing matplotlib's Figure costs about 0.5 s (-X importtime), paid only when
    # a timeline is drawn
    from matplotlib import dates as mdates
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    rows = sorted({p.row for p in points})
    days = [p.day for p in points]
    first, last = min(days), max(days)
    pad = max(dt.timedelta(days=3), (last - first) / 12)
    low, high = mdates.date2num(first - pad), mdates.date2num(last + pad)
    # Markers closer than this many days would touch in a plot area about 600 px wide.
    gap = (high - low) * (2.4 * MARKER_RADIUS_PX) / PLOT_PX
    placed: list[tuple[TimelineGroup, float, float]] = []
    for row_index, row in enumerate(rows):
        mine = [group for group in _groups(points) if group.row == row]
        mine.sort(key=lambda group: (group.day, group.state))
        xs = [mdates.date2num(group.day) for group in mine]
        for group, x, lane in zip(mine, xs, _lanes(xs, gap), strict=True):
            placed.append((group, x, row_index + lane * LANE_STEP))

    height_inches = 1.3 + ROW_INCHES * len(rows)
    figure = Figure(figsize=(WIDTH_INCHES, height_inches), dpi=DPI, layout="constrained")
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    for state, style in STYLES.items():
        spots = [(x, y) for group, x, y in placed if group.state == state]
        if spots:
            axes.scatter([x for x, _ in spots], [y for _, y in spots], s=90, linewidths=1.6,
                         zorder=3, **style)
    for group, x, y in placed:
        if group.count > 1:  # the count, beside its marker
            axes.annotate(str(group.count), (x, y), xytext=(MARKER_RADIUS_PX + 1, 0),
                          textcoords="offset pixels", va="center", ha="left", fontsize=9,
                          fontweight="bold", color="#333333", zorder=4)
    axes.set_yticks(range(len(rows)), [_short(row) for row in rows])
    axes.set_ylim(-0.6, len(rows) - 0.4)
    axes.invert_yaxis()
    axes.set_xlim(low, high)
    locator = mdates.AutoDateLocator(minticks=3, maxticks=8)
    axes.xaxis.set_major_locator(locator)
    # Ticks name day and month (or month, or year); the years spanned go below the axis.
    axes.xaxis.set_major_formatter(mdates.ConciseDateFormatter(
        locator, show_offset=False, formats=["%Y", "%b %Y", "%d %b", "%H:%M", "%H:%M", "%S"],
        zero_formats=["", "%Y", "%b", "%d %b", "%H:%M", "%H:%M"]))
    years = sorted({first.year, last.year})
    axes.set_xlabel("–".join(str(year) for year in years), fontsize=9)
    axes.grid(axis="x", color="#dddddd", linewidth=0.8)
    axes.grid(axis="y", color="#eeeeee", linewidth=0.8)
    axes.set_axisbelow(True)
    for side in ("top", "right"):
        axes.spines[side].set_visible(False)
    axes.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False, fontsize=9)
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=DPI)
    # The layout is the one just saved: place each marker's area in the image's pixels.
    width, height = (round(v) for v in figure.get_size_inches() * DPI)
    areas = []
    for group, x, y in placed:
        px, py = axes.transData.transform((x, y))
        point = group.points[0]
        title = f"{point.title} ({point.day.isoformat()}, {point.state})"
        if group.count > 1:
            title = (f"{group.count} {group.state} sources on {group.day.isoformat()}: "
                     + "; ".join(p.title for p in group.points))
        areas.append(TimelineArea(round(px), round(height - py), MARKER_RADIUS_PX, point.href,
                                  title, group.state, point.key))
    return buffer.getvalue(), width, height, areas
