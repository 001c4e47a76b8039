"""The lenient JSON Lines readers: one verdict per non-blank line, numbered as in the file."""

from __future__ import annotations

from common.jsonl import json_file_objects, json_objects


def test_json_objects_gives_one_verdict_per_non_blank_line():
    lines = ['{"a": 1}', "", "   ", "{bad", "[1, 2]", '{"b": 2}']
    assert list(json_objects(lines)) == [
        (1, {"a": 1}, ""),
        (4, None, "bad JSON (Expecting property name enclosed in double quotes, column 2)"),
        (5, None, "expected a JSON object"),
        (6, {"b": 2}, ""),
    ]
    assert [n for n, _, _ in json_objects(['{"a": 1}'], start=10)] == [10]


def test_json_file_objects_numbers_lines_like_the_file(tmp_path):
    path = tmp_path / "rows.jsonl"
    path.write_text('{"a": 1}\n\n"text"\n{"é": "ü"}\n', encoding="utf-8")
    assert list(json_file_objects(path)) == [
        (1, {"a": 1}, ""),
        (3, None, "expected a JSON object"),
        (4, {"é": "ü"}, ""),
    ]


def test_json_file_objects_reports_a_line_that_is_not_utf8_and_reads_on(tmp_path):
    path = tmp_path / "rows.jsonl"
    path.write_bytes(b'{"a": 1}\n{"b": "\xff"}\n\n{"c": 3}\n')
    verdicts = list(json_file_objects(path))
    assert [(n, row) for n, row, _ in verdicts] == [(1, {"a": 1}), (2, None), (4, {"c": 3})]
    assert verdicts[1][2] == "not UTF-8 text (invalid start byte: byte 0xff at column 8)"


def test_json_file_objects_accepts_a_byte_order_mark(tmp_path):
    path = tmp_path / "rows.jsonl"
    path.write_bytes(b'\xef\xbb\xbf{"a": 1}\r\n{"b": 2}\r\n')
    assert list(json_file_objects(path)) == [(1, {"a": 1}, ""), (2, {"b": 2}, "")]


def test_json_objects_names_nesting_and_huge_numbers_without_raising():
    verdicts = list(json_objects(["[" * 100_000, '{"n": ' + "9" * 5000 + "}"]))
    assert verdicts[0] == (1, None, "bad JSON (nested too deeply)")
    assert verdicts[1][1] is None and verdicts[1][2].startswith("bad JSON (")
