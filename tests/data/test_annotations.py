from __future__ import annotations

import logging
import os

from ccm.data.annotations import Rule, parse_annotations

FIXTURE = os.path.join(os.path.dirname(__file__), "fixtures", "annotated.yaml")


def _text():
    with open(FIXTURE) as fh:
        return fh.read()


def test_annotated_fixture_rules(caplog):
    with caplog.at_level(logging.WARNING, logger="ccm.data.annotations"):
        rules = parse_annotations(_text())
    assert [(r.key, r.kind, r.expression) for r in rules] == [
        ("service_name", "require", None),
        ("listen_address", "validate", "isIPv4(value)"),
        ("web.listen_port", "require", None),
        ("web.listen_port", "validate", "isInt(value)"),
        ("admin_email", "require", None),
    ]
    assert rules[0].line == 12
    warned = [(r.getMessage(), r.kv) for r in caplog.records]
    assert warned == [("Unrecognized annotation in hiera data",
                       {"key": "log_level", "annotation": "@loud   <- unknown directive: warned about"})]


def test_blank_line_separates_comment_from_key():
    text = "data:\n  # @require\n\n  a: 1\n  # @require\n  b: 2\n"
    assert [r.key for r in parse_annotations(text)] == ["b"]


def test_last_validate_wins_and_trailing_comment_counts():
    text = "data:\n  # @validate isInt(value)\n  a: 1 # @validate isIP(value)\n"
    assert parse_annotations(text) == [Rule("a", "validate", "isIP(value)", 3)]


def test_hash_inside_quotes_is_not_a_comment():
    text = "data:\n  url: \"http://x/#frag\" # @require\n  b: 'it''s # @require'\n  c: x#@require\n"
    assert [r.key for r in parse_annotations(text)] == ["url"]


def test_no_data_key_or_other_data_key():
    assert parse_annotations("other:\n  # @require\n  a: 1\n") == []
    rules = parse_annotations("values:\n  # @require\n  a: 1\n", data_key="values")
    assert [r.key for r in rules] == ["a"]


def test_data_block_ends_at_next_top_level_key():
    text = "data:\n  a: 1\nextra:\n  # @require\n  b: 1\n"
    assert parse_annotations(text) == []


def test_compact_list_at_parent_indent_does_not_leak_path():
    text = "data:\n  pkgs:\n  - a\n  - b\n  # @require\n  after: 1\n"
    assert [r.key for r in parse_annotations(text)] == ["after"]


def test_deep_nesting_and_quoted_keys():
    text = 'data:\n  a:\n    "b.c":\n      # @require\n      d: 1\n'
    assert [r.key for r in parse_annotations(text)] == ["a.b.c.d"]
