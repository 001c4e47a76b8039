"""Small, real-looking ALTO and METS files for the import tests (Le Petit Journal, 1887).

Every element is written on a line of its own, so a test can name the line a problem is on.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from xml.sax.saxutils import quoteattr

ALTO_V2 = "http://www.loc.gov/standards/alto/ns-v2#"
ALTO_V3 = "http://www.loc.gov/standards/alto/ns-v3#"
ALTO_V4 = "http://www.loc.gov/standards/alto/ns-v4#"
ALTO_CCS = "http://schema.ccs-gmbh.com/ALTO"


@dataclass(frozen=True)
class W:
    """One ``String``: its CONTENT, WC (None: no WC attribute) and hyphenation attributes."""

    content: str | None
    wc: float | None = 0.95
    subs_type: str | None = None
    subs_content: str | None = None


HYP = "HYP"


def words(text: str, wc: float | None = 0.95, **by_word: float | None) -> list[W | str]:
    """The words of ``text`` with confidence ``wc``; ``by_word`` gives some their own."""
    return [W(word, by_word.get(word, wc)) for word in text.split()]


@dataclass(frozen=True)
class Block:
    id: str
    lines: list[list[W | str]]
    box: tuple[int, int, int, int] = (100, 200, 1200, 300)


@dataclass
class Page:
    blocks: list[Block]
    namespace: str = ALTO_V3
    width: int = 2480
    height: int = 3508
    extra_string_attributes: dict[str, str] = field(default_factory=dict)


def _string(word: W, extra: dict[str, str]) -> str:
    attributes = {} if word.content is None else {"CONTENT": word.content}
    if word.wc is not None:
        attributes["WC"] = f"{word.wc:g}"
    # Per-character confidence, as some producers write it: ignored by the import.
    attributes["CC"] = " ".join("1" for _ in (word.content or ""))
    if word.subs_type:
        attributes["SUBS_TYPE"] = word.subs_type
    if word.subs_content:
        attributes["SUBS_CONTENT"] = word.subs_content
    attributes.update(extra)
    return "<String " + " ".join(f"{k}={quoteattr(v)}" for k, v in attributes.items()) + "/>"


def alto_xml(page: Page) -> str:
    """The ALTO file of ``page``: one element per line."""
    out = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f'<alto xmlns="{page.namespace}">',
        "<Description>",
        "<MeasurementUnit>pixel</MeasurementUnit>",
        "</Description>",
        "<Layout>",
        f'<Page ID="P1" PHYSICAL_IMG_NR="1" WIDTH="{page.width}" HEIGHT="{page.height}">',
        "<PrintSpace>",
    ]
    for block in page.blocks:
        hpos, vpos, width, height = block.box
        out.append(f'<TextBlock ID="{block.id}" HPOS="{hpos}" VPOS="{vpos}" WIDTH="{width}" '
                   f'HEIGHT="{height}">')
        for number, line in enumerate(block.lines):
            out.append(f'<TextLine ID="{block.id}_L{number + 1}">')
            previous_was_word = False
            for item in line:
                if item == HYP:
                    out.append('<HYP CONTENT="-"/>')
                    previous_was_word = False
                    continue
                assert isinstance(item, W)
                if previous_was_word:
                    out.append("<SP/>")
                out.append(_string(item, page.extra_string_attributes))
                previous_was_word = True
            out.append("</TextLine>")
        out.append("</TextBlock>")
    out += ["</PrintSpace>", "</Page>", "</Layout>", "</alto>"]
    return "\n".join(out) + "\n"


def line_of(xml: str, needle: str) -> int:
    """The 1-based line of ``xml`` where ``needle`` first appears."""
    for number, line in enumerate(xml.splitlines(), 1):
        if needle in line:
            return number
    raise AssertionError(f"{needle!r} not in the sample")


# A two-page issue of Le Petit Journal, 26 February 1887. Page 1 cuts "Boulanger" with
# HypPart1/HypPart2 and SUBS_CONTENT, and "Chambre" with a bare HYP at the line's end.
MASTHEAD = Block("TB1", [words("LE PETIT JOURNAL", 0.98)], (300, 120, 1880, 160))
LEADER = Block("TB2", [
    words("Paris, 25 février."),
    words("Le conseil des ministres s'est réuni hier à l'Élysée sous la", **{"l'Élysée": 0.41}),
    [*words("présidence de M. Grévy. Le ministre de la Guerre, le général"),
     W("Boulan", 0.9, "HypPart1", "Boulanger"), HYP],
    [W("ger", 0.7, "HypPart2", "Boulanger"), *words("a exposé ses projets.", exposé=0.52)],
    [*words("La"), W("Cham", 0.6), HYP],
    [W("bre", 0.8), *words("discutera lundi le budget.")],
], (120, 320, 1150, 900))
FAITS_DIVERS = Block("TB3", [
    words("Faits divers.", 0.97),
    words("Un incendie a éclaté cette nuit rue de Rivoli ; les pompiers", éclaté=0.41, rue=None),
    words("de la caserne voisine l'ont éteint en une heure."),
], (120, 140, 1150, 700))

PAGE_ONE_TEXT = (
    "LE PETIT JOURNAL\n\n"
    "Paris, 25 février. Le conseil des ministres s'est réuni hier à l'Élysée sous la présidence "
    "de M. Grévy. Le ministre de la Guerre, le général Boulanger a exposé ses projets. La "
    "Chambre discutera lundi le budget."
)
PAGE_TWO_TEXT = (
    "Faits divers. Un incendie a éclaté cette nuit rue de Rivoli ; les pompiers de la caserne "
    "voisine l'ont éteint en une heure."
)
ISSUE_TEXT = PAGE_ONE_TEXT + "\n\n" + PAGE_TWO_TEXT


def page_one(namespace: str = ALTO_V3) -> str:
    return alto_xml(Page([MASTHEAD, LEADER], namespace))


def page_two(namespace: str = ALTO_V3, *, eclate_wc: float = 0.41) -> str:
    block = Block("TB3", [FAITS_DIVERS.lines[0], words(
        "Un incendie a éclaté cette nuit rue de Rivoli ; les pompiers", éclaté=eclate_wc,
        rue=None), FAITS_DIVERS.lines[2]], FAITS_DIVERS.box)
    return alto_xml(Page([block], namespace))


def issue_confidences(*, eclate_wc: float = 0.41) -> list[float]:
    """Every word confidence of the issue, counted by hand from the blocks above."""
    masthead = [0.98] * 3
    leader = (
        [0.95] * 3  # Paris, 25 février.
        + [0.95] * 8 + [0.41] + [0.95] * 2  # Le conseil … à l'Élysée sous la
        + [0.95] * 11 + [(0.9 + 0.7) / 2]  # présidence … général Boulanger
        + [0.95, 0.52, 0.95, 0.95]  # a exposé ses projets.
        + [0.95, (0.6 + 0.8) / 2] + [0.95] * 4  # La Chambre discutera lundi le budget.
    )
    faits_divers = (
        [0.97] * 2
        + [0.95] * 3 + [eclate_wc] + [0.95] * 2 + [0.95] * 5  # "rue" has no WC
        + [0.95] * 9
    )
    return masthead + leader + faits_divers


def mets_xml(*, objid: str, title: str, date: str, files: list[tuple[str, str]],
             order: list[str], iiif: dict[str, str] | None = None, host: str = "",
             extent: tuple[str, str] | None = None, labels: list[str] | None = None) -> str:
    """A METS file: ``files`` (id, href) in its fileSec, ``order`` (ids) in its PHYSICAL map;
    ``iiif`` (ALTO file id -> URL) adds a IIIF fileGrp pointed at by the same page divs;
    ``host`` a MODS relatedItem host title, ``extent`` its pages (start, end), ``labels`` each
    page div's ORDERLABEL."""
    iiif = iiif or {}
    labels = labels or []
    out = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        '<mets:mets xmlns:mets="http://www.loc.gov/METS/" xmlns:mods="http://www.loc.gov/mods/v3"',
        f'  xmlns:xlink="http://www.w3.org/1999/xlink" OBJID="{objid}" TYPE="newspaper">',
        '<mets:dmdSec ID="DMD1">',
        '<mets:mdWrap MDTYPE="MODS">',
        "<mets:xmlData>",
        "<mods:mods>",
        f"<mods:titleInfo><mods:title>{title}</mods:title></mods:titleInfo>",
        f'<mods:originInfo><mods:dateIssued encoding="w3cdtf">{date}</mods:dateIssued>'
        "</mods:originInfo>",
        *([f'<mods:relatedItem type="host"><mods:titleInfo><mods:title>{host}</mods:title>'
           "</mods:titleInfo></mods:relatedItem>"] if host else []),
        *([f'<mods:part><mods:extent unit="pages"><mods:start>{extent[0]}</mods:start>'
           f"<mods:end>{extent[1]}</mods:end></mods:extent></mods:part>"] if extent else []),
        "</mods:mods>",
        "</mets:xmlData>",
        "</mets:mdWrap>",
        "</mets:dmdSec>",
        "<mets:fileSec>",
        '<mets:fileGrp USE="IMAGE">',
    ]
    for file_id, href in files:
        image = href.rsplit("/", 1)[-1].replace(".xml", ".jp2")
        out.append(f'<mets:file ID="IMG_{file_id}" MIMETYPE="image/jp2"><mets:FLocat '
                   f'LOCTYPE="URL" xlink:href="images/{image}"/></mets:file>')
    out += ["</mets:fileGrp>", '<mets:fileGrp USE="ALTO">']
    for file_id, href in files:
        out.append(f'<mets:file ID="{file_id}" MIMETYPE="text/xml">')
        out.append(f'<mets:FLocat LOCTYPE="URL" xlink:href="{href}"/>')
        out.append("</mets:file>")
    if iiif:
        out += ["</mets:fileGrp>", '<mets:fileGrp USE="IIIF">']
        for file_id, url in iiif.items():
            out.append(f'<mets:file ID="IIIF_{file_id}"><mets:FLocat LOCTYPE="URL" '
                       f'xlink:href={quoteattr(url)}/></mets:file>')
    out += ["</mets:fileGrp>", "</mets:fileSec>",
            '<mets:structMap TYPE="PHYSICAL">', '<mets:div TYPE="physSequence">']
    for position, file_id in enumerate(order, 1):
        label = f' ORDERLABEL="{labels[position - 1]}"' if position <= len(labels) else ""
        out += [f'<mets:div TYPE="page" ORDER="{position}"{label}>',
                f'<mets:fptr FILEID="IMG_{file_id}"/>', f'<mets:fptr FILEID="{file_id}"/>',
                *([f'<mets:fptr FILEID="IIIF_{file_id}"/>'] if file_id in iiif else []),
                "</mets:div>"]
    out += ["</mets:div>", "</mets:structMap>", "</mets:mets>"]
    return "\n".join(out) + "\n"


def write(folder: Path, name: str, content: str | bytes) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def petit_journal_mets_folder(root: Path, *, eclate_wc: float = 0.41) -> Path:
    """A folder with the issue's METS file and its two pages under alto/ (listed page 2 first)."""
    folder = root / "petit_journal_1887"
    write(folder, "alto/0001.xml", page_one())
    write(folder, "alto/0002.xml", page_two(eclate_wc=eclate_wc))
    write(folder, "18870226_mets.xml", mets_xml(
        objid="bpt6k5910346", title="Le Petit Journal", date="1887-02-26",
        files=[("ALTO2", "alto/0002.xml"), ("ALTO1", "alto/0001.xml")],
        order=["ALTO1", "ALTO2"],
    ))
    return folder


# A long page for chunk means: block 1 holds 100 sentences of 10 words (ten of them with
# "voté" at 0.41, every other word at 0.9); block 2 holds 100 sentences of 10 words at 0.8,
# except "a", which has no WC. Each block is exactly one chunk of 1,000 words.
VOTE = "Le conseil municipal de Paris a voté hier le budget."
DEBATE = "La Chambre des députés a repris la discussion du projet."


def long_page() -> str:
    first = [words(VOTE, 0.9, voté=0.41 if i % 10 == 0 else 0.9) for i in range(100)]
    second = [words(DEBATE, 0.8, a=None) for _ in range(100)]
    return alto_xml(Page([Block("TB1", first), Block("TB2", second, (120, 1400, 1150, 1900))]))


LONG_PAGE_BLOCK_MEANS = ((990 * 0.9 + 10 * 0.41) / 1000, 0.8)
LONG_PAGE_MEAN = (990 * 0.9 + 10 * 0.41 + 900 * 0.8) / 1900
