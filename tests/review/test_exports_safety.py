"""Hostile text in any field never splits a record, breaks a file, runs a formula or adds markup."""

from __future__ import annotations

import csv
import io
import json
from datetime import date

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent.models import Investigation
from agent.review.export_safety import (
    FORMULA_PREFIXES,
    bibtex_keys,
    csv_cell,
    md_link,
    md_text,
    one_line,
)
from agent.review.exports import Citation, Note, to_bibtex, to_csl_json, to_csv, to_markdown, to_ris

HOSTILE = [
    "\n", "\r\n", "\r", "\u2028", "\u2029", "\x85", "\x0b", "\x0c", "\x1e", "\t", "\x00",
    "ER  - ", "\nER  - \nTY  - JOUR\n", "TY  - ", "@article{x,", "@comment{", "}", "{", "}}{{",
    "\\", "%", "#", "# ", "=", "+", "-", "@", "=HYPERLINK(\"http://x\")", "+1+2", "-2+3",
    "@SUM(A1)", "\t=1", "\r=1", "<script>alert(1)</script>", "<img src=x onerror=alert(1)>",
    "[lien](javascript:alert(1))", "javascript:alert(1)", " JavaScript:alert(1)", "`", "```",
    "*", "_", "**gras**", "&amp;", "&#60;", "> citation", "1. ", "2) ", "- ", "| a | b |",
    "---", "===", "~~", "![x](http://x/y.png)", '"', "'", ",", ";", "é", "ç", "«", "»", "🙂",
    "\u202e", "\ufeff",
]
texts = st.lists(st.one_of(st.sampled_from(HOSTILE),
                           st.text(st.characters(exclude_categories=("Cs",)), max_size=12)),
                 max_size=6).map("".join)


@st.composite
def citations(draw) -> list[Citation]:
    keys = draw(st.lists(texts.filter(bool), min_size=1, max_size=6, unique=True))
    items = []
    for rank, key in enumerate(keys, start=1):
        decided_by = draw(st.sampled_from(["agent", "historian"]))
        notes = draw(st.lists(st.builds(Note, text=texts, author=texts, at=texts), max_size=2))
        items.append(Citation(
            key=key, rank=rank, state="accepted", title=draw(texts),
            publication=draw(texts), sub_corpus=draw(texts),
            genre=draw(st.sampled_from(["press", "debates", ""])),
            date=draw(st.one_of(st.just(""), st.dates(date(1800, 1, 1), date(1950, 12, 31))
                                .map(date.isoformat))),
            page=draw(texts), url=draw(texts),
            ocr_confidence=draw(st.one_of(st.none(), st.floats(0, 1))), quote=draw(texts),
            quote_start=draw(st.one_of(st.none(), st.integers(0, 10**6))), quote_end=None,
            quote_origin=draw(st.sampled_from(["verdict", "chunk", ""])),
            rationale=draw(texts), rationale_by=draw(st.sampled_from(["agent", "historian"])),
            agent_rationale=draw(texts), decided_by=decided_by,
            decider=draw(texts) if decided_by == "historian" else "the agent",
            decided_at=draw(texts), decided_at_local=draw(texts), confirmations=1,
            policy=draw(texts), historian_notes=notes,
        ))
    return items


HYPOTHESIS = settings(max_examples=150, deadline=None,
                      suppress_health_check=[HealthCheck.too_slow])


@HYPOTHESIS
@given(items=citations())
def test_ris_holds_one_record_per_source(items):
    import rispy

    records = rispy.loads(to_ris(items, Investigation()))
    assert len(records) == len(items)
    assert [r.get("id", "") for r in records] == [one_line(item.key) for item in items]


@HYPOTHESIS
@given(items=citations())
def test_bibtex_parses_with_one_distinct_key_per_source(items):
    import bibtexparser

    library = bibtexparser.parse_string(to_bibtex(items, Investigation()))
    assert not library.failed_blocks
    assert len(library.entries) == len(items)
    keys = [entry.key for entry in library.entries]
    assert len({key.lower() for key in keys}) == len(items)
    titles = [entry.fields_dict["title"].value if "title" in entry.fields_dict else ""
              for entry in library.entries]
    assert titles == [one_line(item.title).replace("\\", "/").replace("{", "(").replace("}", ")")
                      for item in items]


@HYPOTHESIS
@given(items=citations())
def test_csv_has_no_cell_a_spreadsheet_would_run(items):
    body = to_csv(items, Investigation())
    assert body.startswith("\ufeff")
    rows = list(csv.reader(io.StringIO(body[1:])))
    assert len(rows) == len(items) + 1
    for row in rows:
        for cell in row:
            assert not cell.startswith(FORMULA_PREFIXES), cell
            assert "\n" not in cell and "\r" not in cell


@HYPOTHESIS
@given(items=citations())
def test_csl_json_round_trips_every_field(items):
    records = json.loads(to_csl_json(items, Investigation()))
    assert [r["id"] for r in records] == [item.key for item in items]
    assert [r["annote"] for r in records] == [item.rationale for item in items]


@HYPOTHESIS
@given(question=texts, items=citations())
def test_markdown_heading_holds_the_question_as_one_escaped_line(question, items):
    from markdown_it import MarkdownIt

    investigation = Investigation(question=question, policy_label="offline policy (no LLM)")
    tokens = MarkdownIt("commonmark").parse(to_markdown(items, investigation))
    assert tokens[0].type == "heading_open" and tokens[0].tag == "h1"
    heading = tokens[1]
    assert {child.type for child in heading.children} <= {"text", "text_special"}
    assert "".join(child.content for child in heading.children) == \
        f"Sources: {one_line(question)}".strip()
    assert tokens[2].type == "heading_close"
    assert sum(t.type == "heading_open" for t in tokens) == 1
    assert not any(t.type.startswith("html") for t in tokens), "no raw HTML from any field"
    sources = [t for t in tokens if t.type == "list_item_open" and t.level == 1]
    assert len(sources) == len(items)
    links = [t for t in tokens if t.type == "inline" for t in t.children or ()
             if t.type == "link_open"]
    assert all(link.attrs["href"].lower().startswith(("http://", "https://")) for link in links)


def test_keys_that_sanitise_alike_get_distinct_bibtex_keys():
    keys = bibtex_keys(["press:1887/02", "press_1887_02", "press 1887 02", "PRESS:1887:02"])
    assert keys[0] == "press_1887_02" and len({k.lower() for k in keys}) == 4


def test_only_http_addresses_become_links():
    assert md_link("https://gallica.bnf.fr/ark:/12148/x") == "<https://gallica.bnf.fr/ark:/12148/x>"
    for url in ("javascript:alert(1)", " JavaScript:alert(1)", "ark:/12148/x", "data:text/html,x"):
        assert not md_link(url).startswith("<")


def test_cells_starting_with_tab_or_carriage_return_are_neutralised():
    for value in ("=1+1", "+1", "-1", "@SUM(A1)", "\t=1", "\r=1", "\n=1"):
        assert csv_cell(value).startswith("'")
    assert csv_cell("Le Gaulois") == "Le Gaulois" and csv_cell(3) == 3


def test_markdown_escapes_only_what_would_become_markup():
    assert md_text("L'Intransigeant, 1887 — « bloc enfariné »") == \
        "L'Intransigeant, 1887 — « bloc enfariné »"
    assert md_text("1887. Séance") == "1887\\. Séance"
    assert md_text("a <b> & *c*") == "a \\<b> \\& \\*c\\*"
