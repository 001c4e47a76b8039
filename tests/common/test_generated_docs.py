"""Generated blocks: only the text between a block's markers is rewritten, with command and date."""

from __future__ import annotations

import datetime as dt

import pytest

from common.generated_docs import GeneratedBlockError, write_doc_blocks, write_generated_block


def test_only_the_block_is_replaced_and_it_says_who_wrote_it(tmp_path):
    doc = tmp_path / "doc.md"
    doc.write_text("Intro.\n<!-- BEGIN generated: t -->\nold\n<!-- END generated: t -->\nOutro.\n")
    write_generated_block(doc, "t", "| a |\n", command="manage.py x --y 1",
                          when=dt.date(2026, 1, 2))
    assert doc.read_text() == ("Intro.\n<!-- BEGIN generated: t -->\n"
                               "_Written by `manage.py x --y 1` on 2026-01-02._\n\n| a |\n"
                               "<!-- END generated: t -->\nOutro.\n")
    write_generated_block(doc, "t", "| b |", command="c", when=dt.date(2026, 1, 3))
    assert "| a |" not in doc.read_text() and doc.read_text().count("BEGIN generated") == 1


@pytest.mark.parametrize("text", [
    "no markers", "<!-- END generated: t -->\n<!-- BEGIN generated: t -->",
    "<!-- BEGIN generated: t -->\n<!-- BEGIN generated: t -->\n<!-- END generated: t -->"])
def test_a_missing_or_malformed_block_is_refused_and_the_file_kept(tmp_path, text):
    doc = tmp_path / "doc.md"
    doc.write_text(text)
    with pytest.raises(GeneratedBlockError, match="exactly one"):
        write_generated_block(doc, "t", "x", command="c")
    assert doc.read_text() == text


def test_a_scripts_blocks_name_its_write_doc_and_a_block_other_than_its_default(tmp_path):
    docs = [tmp_path / "a.md", tmp_path / "b b.md"]
    for doc in docs:
        doc.write_text("<!-- BEGIN generated: x -->\n<!-- END generated: x -->\n")
    write_doc_blocks(docs, "x", "| 1 |", words=["python", "s.py", "--n", "3"],
                     default_block="y", base=tmp_path)
    for doc in docs:
        assert ("_Written by `python s.py --n 3 --write-doc a.md --write-doc 'b b.md' "
                "--doc-block x` on ") in doc.read_text()
        assert "| 1 |" in doc.read_text()
    write_doc_blocks(docs[:1], "x", "| 2 |", words=["s.py"], default_block="x", base=tmp_path)
    assert "_Written by `s.py --write-doc a.md` on " in docs[0].read_text()
