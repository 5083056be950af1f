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


REFS = ["file#/a", "file#/b", "exec#x", "File#/a", "file#", "#x", "file/a", "file#/a\n", "{{ x }}", "${ y }",
        "file#{{ x }}", "", "package#ccm test"]


def test_pattern_only_lists_share_a_shape_exactly_when_every_item_gets_the_same_verdict():
    """``require``/``subscribe``/``environment`` items are constrained by patterns only, so
    lists whose items match the same patterns share a shape; one representative's verdict
    must then be every member's (checked against jsonschema itself)."""
    validator = schema._validator("manifest.json")

    def ok(type_name, key, value):
        props = {"name": "x", "ensure": "present", key: value}
        if type_name == "exec":
            props["name"] = "/bin/true"
        doc = {"ccm": {"resources": [{type_name: props}]}}
        return not list(validator.iter_errors(doc))

    assert set(schema._pattern_lists("exec")) >= {"require", "subscribe", "environment"}
    for type_name, key in (("file", "require"), ("exec", "subscribe"), ("service", "subscribe"),
                           ("exec", "environment")):
        values = [[r] for r in REFS + ["A=1", "A=", "a b=1", "_X=y\n"]]
        values += [list(p) for p in itertools.product(REFS[:4] + REFS[8:10], repeat=2)]
        by_key = {}
        for v in values:
            base = {"name": "x", "ensure": "present", key: v}
            by_key.setdefault(schema._shape_key(type_name, base), []).append(v)
        assert len(by_key) < len(values)
        for members in by_key.values():
            verdicts = {ok(type_name, key, v) for v in members}
            assert len(verdicts) == 1, (type_name, key, members)
        short, longer = {key: ["file#/a"]}, {key: ["file#/a", "file#/a"]}
        assert schema._shape_key(type_name, short) != schema._shape_key(type_name, longer)
