"""The one YAML loader bounds hostile documents and names FILE:LINE:COLUMN."""
from __future__ import annotations

import time

import pytest

from ccm import yamlio


def _bomb(levels: int = 9) -> str:
    text = 'a: &a ["x","x","x","x","x","x","x","x","x"]\n'
    prev = "a"
    for name in "bcdefghijklm"[:levels - 1]:
        text += f"{name}: &{name} [" + ",".join(["*" + prev] * 9) + "]\n"
        prev = name
    return text


@pytest.mark.parametrize("text, expected", [
    ("x:\n  ensure: present\n  ensure: absent\n", 'm.yaml:3:3: duplicate key "ensure" (first defined on line 2)'),
    ("ccm: {}\ndata: {}\nccm: {}\n", 'm.yaml:3:1: duplicate key "ccm" (first defined on line 1)'),
    ("a: [1,\n", "m.yaml:2:1: did not find expected node content (while parsing a flow node)"),
    ("a: 1\n- b\n", "m.yaml:2:1: did not find expected key (while parsing a block mapping)"),
    ("a: \x00\n", "m.yaml:1:4: unacceptable character #x00: special characters are not allowed"),
    ("[" * 101 + "]" * 101, "m.yaml:1:101: nesting deeper than 100 levels"),
    ("- " * 101 + "x\n", "m.yaml:1:201: nesting deeper than 100 levels"),
    ("[" * 50000 + "]" * 50000, "m.yaml:1:101: nesting deeper than 100 levels"),
])
def test_rejected_documents_name_file_line_and_column(text, expected):
    with pytest.raises(yamlio.YAMLLoadError) as err:
        yamlio.load(text, source="m.yaml")
    assert str(err.value) == expected


def test_depth_at_the_limit_loads():
    assert yamlio.load("[" * 100 + "]" * 100) is not None


def test_alias_bomb_fails_fast():
    start = time.monotonic()
    with pytest.raises(yamlio.YAMLLoadError) as err:
        yamlio.load(_bomb(), source="bomb.yaml")
    assert time.monotonic() - start < 1.0
    assert "aliases expand to" in str(err.value) and str(err.value).startswith("bomb.yaml:")


def test_ordinary_aliases_and_merge_keys_still_work():
    assert yamlio.load("a: &x {k: 1}\nb:\n  <<: *x\n  k: 2\nc: *x\n") == {
        "a": {"k": 1}, "b": {"k": 2}, "c": {"k": 1}}


def test_positions_give_the_line_of_each_mapping():
    pos: yamlio.Positions = {}
    doc = yamlio.load("resources:\n  - file:\n      /a: {}\n  - exec:\n      b: {}\n", positions=pos)
    assert yamlio.line_of(pos, doc["resources"][0]) == 2
    assert yamlio.line_of(pos, doc["resources"][1]) == 4
    assert yamlio.line_of(pos, {}) == 0


def test_invalid_utf8_bytes_name_the_offset():
    with pytest.raises(yamlio.YAMLLoadError) as err:
        yamlio.load(b"a: \xff\n", source="x.yaml")
    assert str(err.value) == "x.yaml: invalid UTF-8 at byte offset 3"
