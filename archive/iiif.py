"""IIIF links of scanned pages: which URLs are accepted, and the page regions the viewer shows.

A document (or one page of it) may name a IIIF Image API base (``https://host/iiif/ark1``,
to which ``/{region}/{size}/{rotation}/default.jpg`` is appended) or a IIIF manifest. The
server never fetches either: the browser loads the region image, and only over http(s).
Accepted at import: http or https, a host name, no user name or password, and no host that
is ``localhost`` or a literal private, loopback, link-local, reserved or unspecified IP address
(in any spelling the browser reads as one, such as ``2130706433`` or ``0x7f.1``, and an IPv4
address carried inside an IPv6 one: IPv4-compatible ``::127.0.0.1``, NAT64 ``64:ff9b::/96``,
6to4 ``2002::/16``, Teredo). Host names are never resolved (no lookup leaves the server), so a
name is refused when it spells an internal address itself: one of the wildcard DNS services that
answer any name with the address written in it or with the loopback (``127.0.0.1.nip.io``,
``localtest.me``; ``LOOPBACK_DOMAINS``), or a name whose leading labels are an internal IPv4
address (``10.0.0.5.example.org``, ``10-0-0-5.example.org``). A name of one's own pointed at an
internal address stays undetectable without a lookup: the browser, not the server, loads it.

A manifest cannot be read without fetching it, so only an Image API base shows a region; a
manifest is offered as a link. A URL is taken for a manifest when its path ends in
``manifest`` or ``manifest.json``.

No Django here: the importers and the viewer share these rules.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit

from archive.layout import DocumentLayout, LayoutBlock, layout_span

MAX_URL_CHARS = 500
# What a host name may hold: letters, digits, dots and hyphens (IDN hosts in their ASCII form).
_HOST_NAME = re.compile(r"^[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?$")
# A host the browser could read as an IPv4 address in another spelling (decimal, octal, hex).
_NUMERIC_HOST = re.compile(r"^[0-9a-fx.]+$")
# Wildcard DNS services: every name under them resolves to the address it spells, or to the
# loopback. Nothing legitimate serves IIIF images from them.
LOOPBACK_DOMAINS = ("nip.io", "sslip.io", "xip.io", "traefik.me", "localtest.me", "lvh.me",
                    "vcap.me", "lacolhost.com", "localh.st", "fuf.me", "yoogle.com", "1uy.me")
# An IPv4 address written at the start of a name, dotted or dashed ("magic-" prefixes allowed).
_LEADING_IPV4 = re.compile(r"^(?:[a-z0-9-]*?[.-])??((?:\d{1,3}[.-]){3}\d{1,3})(?:[.-]|$)")
_UNSAFE_CHARACTERS = re.compile(r"[\s\"'<>\\^`{|}\x00-\x1f\x7f]")


@dataclass(frozen=True)
class PageRegion:
    """The part of one page image that holds a character range: the IIIF URL to load."""

    page: int
    region: str  # "x,y,w,h" in pixels, or "pct:x,y,w,h"
    url: str


def iiif_url_problem(url: str) -> str:
    """Say why ``url`` is refused as a IIIF URL, or return "" when it is accepted."""
    if len(url) > MAX_URL_CHARS:
        return f"IIIF URL has {len(url)} characters; at most {MAX_URL_CHARS}"
    if _UNSAFE_CHARACTERS.search(url):
        return "IIIF URL holds spaces, quotes or control characters"
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return f"IIIF URL {url[:80]!r} is not a URL"
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        shown = f"{scheme}:" if scheme else "no scheme"
        return f"IIIF URL must start with http:// or https:// ({shown} refused)"
    if parts.username is not None or parts.password is not None or "@" in parts.netloc:
        return "IIIF URL must not carry a user name or password"
    host = (parts.hostname or "").rstrip(".")
    if not host:
        return "IIIF URL has no host"
    if port == 0:
        return "IIIF URL has port 0"
    if host == "localhost" or host.endswith(".localhost"):
        return f"IIIF URL points at {host}, this machine; refused"
    address = _literal_address(host)
    if address is not None:
        if _internal(address):
            return (f"IIIF URL points at {host}, an internal address (private, loopback, "
                    "link-local or reserved); refused")
        return ""
    if not _HOST_NAME.match(host):
        return f"IIIF URL host {host[:80]!r} is not a host name"
    lowered = host.lower()
    if any(lowered == domain or lowered.endswith("." + domain) for domain in LOOPBACK_DOMAINS):
        return (f"IIIF URL host {host[:80]} is under a wildcard DNS service that answers with "
                "internal addresses; refused")
    spelled = _LEADING_IPV4.match(lowered)
    if spelled:
        try:
            inner = ipaddress.IPv4Address(spelled.group(1).replace("-", "."))
        except ValueError:
            inner = None
        if inner is not None and _internal(inner):
            return (f"IIIF URL host {host[:80]} spells the internal address {inner}; refused")
    return ""


def _internal(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    """Not a public unicast address, itself or the IPv4 address it carries."""
    if not address.is_global or address.is_multicast:
        return True
    inner = _embedded_ipv4(address) if isinstance(address, ipaddress.IPv6Address) else None
    return inner is not None and (not inner.is_global or inner.is_multicast)


_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
_SIX_TO_FOUR = ipaddress.IPv6Network("2002::/16")
_IPV4_COMPATIBLE = ipaddress.IPv6Network("::/96")


def _embedded_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address carries to a gateway (NAT64, 6to4, Teredo, ::a.b.c.d)."""
    if address in _NAT64 or address in _IPV4_COMPATIBLE:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    if address.sixtofour is not None:
        return address.sixtofour
    if address.teredo is not None:
        return address.teredo[1]
    return None


def _literal_address(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """The IP address ``host`` spells, however the browser would read it, else None."""
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        if not _NUMERIC_HOST.match(host) or not any(c.isdigit() for c in host):
            return None
        try:  # inet_aton reads the forms browsers accept: 2130706433, 0x7f.1, 0177.0.0.1
            return ipaddress.IPv4Address(socket.inet_aton(host))
        except OSError:
            return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def is_manifest(url: str) -> bool:
    """A IIIF manifest rather than an Image API base (by the end of its path)."""
    path = urlsplit(url).path.rstrip("/").lower()
    return path.endswith("/manifest") or path.endswith("manifest.json")


def image_origin(url: str) -> str:
    """``scheme://host[:port]`` of an accepted URL: what the page's CSP img-src must allow."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    return f"{parts.scheme.lower()}://{host}" + (f":{parts.port}" if parts.port else "")


def region_url(base: str, region: str) -> str:
    """The IIIF Image API URL of ``region`` of the image at ``base``, at full size."""
    return f"{base.rstrip('/')}/{region}/max/0/default.jpg"


def span_regions(layout: DocumentLayout, char_start: int, char_end: int,
                 document_image: str = "") -> list[PageRegion]:
    """The region of each page image holding ``[char_start, char_end)``.

    A page's image is its own IIIF base (``LayoutPage.image``), else the document's when the
    document is one page. The region is the box around the range's blocks on that page, in
    pixels when the layout measures in pixels, else as percentages of the page (ALTO mm10 or
    inch1200 boxes, whose image size the server never learns). A page without an image, a
    manifest, or a box it cannot place gives no region.
    """
    span = layout_span(layout, char_start, char_end)
    pages = {page.number: page for page in layout.pages}
    regions = []
    for number in span.pages:
        page = pages[number]
        base = page.image or (document_image if len(layout.pages) == 1 else "")
        if not base or is_manifest(base) or iiif_url_problem(base):
            continue
        placed = [box for c in span.blocks if c.page == number and (box := _box(c.block))]
        if not placed:
            continue
        left = min(b[0] for b in placed)
        top = min(b[1] for b in placed)
        right = max(b[0] + b[2] for b in placed)
        bottom = max(b[1] + b[3] for b in placed)
        if page.unit in ("", "pixel"):
            region = ",".join(str(round(v)) for v in (left, top, right - left, bottom - top))
        elif page.width and page.height:
            region = "pct:" + ",".join(
                f"{v:.2f}".rstrip("0").rstrip(".") for v in (
                    100 * left / page.width, 100 * top / page.height,
                    100 * (right - left) / page.width, 100 * (bottom - top) / page.height))
        else:
            continue
        regions.append(PageRegion(number, region, region_url(base, region)))
    return regions


def _box(block: LayoutBlock) -> tuple[float, float, float, float] | None:
    """(left, top, width, height) of a block that has all four, else None."""
    if block.hpos is None or block.vpos is None or block.width is None or block.height is None:
        return None
    return block.hpos, block.vpos, block.width, block.height
