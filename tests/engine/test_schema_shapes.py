"""The schema step validates one resource per shape: shapes never merge different JSON."""
from __future__ import annotations

import itertools
import json

from ccm.apply import schema

VALUES = [None, True, False, 0, 1, 1.0, 0.0, -0.5, "", "1", "true", "null", [], (), [1], ["1"],
          [True], [1, 2], [[1]], {}, {"a": 1}, {"a": "1"}, {"a": True}, {"b": 1, "a": 2},
          {"a": 2, "b": 1}, {1: "x"}, {"1": "x"}, [{"a": None}], 10**30]


def test_frozen_values_are_equal_only_when_their_json_is():
    for a, b in itertools.product(VALUES, repeat=2):
        same_json = json.dumps(a, sort_keys=True, default=str) == json.dumps(b, sort_keys=True, default=str)
        if schema._frozen(a) == schema._frozen(b):
            assert same_json, (a, b)
        if isinstance(a, (str, bool, type(None))) and same_json:
            assert schema._frozen(a) == schema._frozen(b), (a, b)


def test_shape_key_masks_free_strings_only():
    free = sorted(schema._free_fields("file"))
    assert "name" in free and "content" in free and "mode" not in free
    base = {"name": "/a", "content": "x", "mode": "0644", "ensure": "present", "require": []}
    other = dict(base, name="/b", content="other text")
    assert schema._shape_key("file", base) == schema._shape_key("file", other)
    assert schema._shape_key("file", base) != schema._shape_key("file", dict(base, content=None))
    assert schema._shape_key("file", base) != schema._shape_key("file", dict(base, mode="0600"))
    assert schema._shape_key("file", base) != schema._shape_key("file", dict(base, require=["file#/x"]))
    assert schema._shape_key("file", base) != schema._shape_key("exec", base)
    reordered = dict(reversed(list(base.items())))
    assert schema._shape_key("file", base) == schema._shape_key("file", reordered)
