"""go_sprint: Go %v text, cases verbatim from spec data-and-templates §3.2."""
from __future__ import annotations

import math

import pytest

from ccm.gocompat.fmt import go_sprint as gofmt_sprint
from ccm.templates import go_sprint


@pytest.mark.parametrize("value, expected", [
    ("plain", "plain"),
    ("", ""),
    (42, "42"),
    (-7, "-7"),
    (3.14159, "3.14159"),
    (8080.0, "8080"),
    (2.0, "2"),
    (999999.0, "999999"),
    (100000.5, "100000.5"),
    (0.0001, "0.0001"),
    (1e6, "1e+06"),
    (1234567.5, "1.2345675e+06"),
    (1e-05, "1e-05"),
    (1e21, "1e+21"),
    (0.1, "0.1"),
    (-0.5, "-0.5"),
    (0.0, "0"),
    (-0.0, "-0"),
    (1e100, "1e+100"),
    (123456.0, "123456"),
    (0.000123, "0.000123"),
    (4040.0, "4040"),
    (math.inf, "+Inf"),
    (-math.inf, "-Inf"),
    (math.nan, "NaN"),
    (True, "true"),
    (False, "false"),
    (None, "<nil>"),
    (["a", "b", "c"], "[a b c]"),
    ([1, 2.5, True], "[1 2.5 true]"),
    (["", "a"], "[ a]"),
    ([], "[]"),
    ({"a": 1, "b": "x"}, "map[a:1 b:x]"),
    ({"b": "x", "a": 1}, "map[a:1 b:x]"),
    ({}, "map[]"),
    ([{"name": "alice"}, {"name": "bob"}], "[map[name:alice] map[name:bob]]"),
    ({"l": [1, None], "m": {"z": 2.0}}, "map[l:[1 <nil>] m:map[z:2]]"),
    ((1, 2), "[1 2]"),
])
def test_go_sprint(value, expected):
    assert go_sprint(value) == expected


def test_exported_from_both_modules():
    assert go_sprint is gofmt_sprint


def test_map_keys_sorted_bytewise():
    assert go_sprint({"b": 1, "B": 2, "a": 3}) == "map[B:2 a:3 b:1]"
    assert go_sprint({2: "x", 10: "y"}) == "map[2:x 10:y]"


@pytest.mark.parametrize("value, expected", [
    (2.0, "2"),
    (0.5, "0.5"),
    (1e20, "100000000000000000000"),
    (1e21, "1e+21"),
    (1.5e-7, "1.5e-7"),
    (0.000001, "0.000001"),
    (123456789.25, "123456789.25"),
    (-3.0, "-3"),
])
def test_go_json_float(value, expected):
    from ccm.gocompat.json import json_float
    assert json_float(value) == expected
