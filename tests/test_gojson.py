"""ccm.gocompat.json: Go's encoding/json text (the one JSON encoder ccm prints with)."""
from __future__ import annotations

import pytest

from ccm.gocompat import json as gojson


def test_marshal_indent_layout_and_escapes():
    value = {"b": [1, 2.0, 1e21, 1e-7], "a": {"html": "<a&b>", "ls": "\u2028"}, "e": [], "m": {}}
    assert gojson.dumps(value, indent=2) == (
        '{\n  "a": {\n    "html": "\\u003ca\\u0026b\\u003e",\n    "ls": "\\u2028"\n  },\n'
        '  "b": [\n    1,\n    2,\n    1e+21,\n    1e-7\n  ],\n  "e": [],\n  "m": {}\n}')
    assert gojson.dumps(value) == ('{"a":{"html":"\\u003ca\\u0026b\\u003e","ls":"\\u2028"},'
                                   '"b":[1,2,1e+21,1e-7],"e":[],"m":{}}')


def test_key_order_by_bytes_or_insertion():
    assert gojson.dumps({"b": 1, "B": 2, "é": 3, "a": 4}) == '{"B":2,"a":4,"b":1,"é":3}'
    assert gojson.dumps({"b": 1, "a": 2}, sort_keys=False) == '{"b":1,"a":2}'


def test_default_hook_and_unsupported_values():
    class Thing:
        pass

    assert gojson.dumps([Thing()], default=lambda v: "thing") == '["thing"]'
    with pytest.raises(ValueError, match="unsupported type"):
        gojson.dumps(Thing())
    with pytest.raises(ValueError, match="unsupported value: NaN"):
        gojson.dumps(float("nan"))
    with pytest.raises(ValueError):
        gojson.dumps(Thing(), default=lambda v: Thing())  # a hook that cannot convert
