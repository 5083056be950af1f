"""``ccm.jsonc`` (JSON through ``_json``, without importing ``json``) against ``json`` itself."""
from __future__ import annotations

import json
import math
import os
import subprocess
import sys

import pytest

from ccm import jsonc

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

VALUES = [
    {"instance": "0123456789abcdef", "labels": {"rôle": "wéb", "q\"uote": "back\\slash\n\t\x01\u2028"},
     "summary": {"total": 10**20, "failed": -3}, "duration": 1.5e-7, "noop": False, "none": None,
     "resources": [{"resource": "file#/etc/\U0001F600", "error": ""}], "nested": [[[]], {}, [1, 2.0, True]]},
    "text", 0, -1.0, 1e300, True, None, [], {},
]
TEXTS = ['  {"a": [1, 2.5, -0, 1E3, "x\\u00e9\\ud83d\\ude00"], "b": {"c": null}}\n', '"\\n"', "NaN", "-Infinity",
         "[1,\r\n2]", '{"a":1,"a":2}', "123456789012345678901234567890", '{"k": "\\u0000"}']
BAD = ["", "   ", "{", "[1,]", "{'a': 1}", '{"a": 1} x', "01", '"\x01"', "\ufeff{}", "[1] [2]", "nul", '{"a" 1}']


@pytest.mark.parametrize("value", VALUES)
def test_dumps_gives_the_text_json_gives(value):
    assert jsonc.dumps(value) == json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    assert jsonc.loads(jsonc.dumps(value)) == value


@pytest.mark.parametrize("text", TEXTS)
def test_loads_gives_the_values_json_gives(text):
    got, want = jsonc.loads(text), json.loads(text)
    assert repr(got) == repr(want) or (isinstance(got, float) and math.isnan(got) and math.isnan(want))
    assert repr(jsonc.loads(text.encode("utf-8"))) == repr(got)


@pytest.mark.parametrize("text", BAD)
def test_bad_texts_are_value_errors_as_with_json(text):
    with pytest.raises(ValueError) as want:
        json.loads(text)
    with pytest.raises(ValueError) as got:
        jsonc.loads(text)
    assert str(got.value) == str(want.value)
    with pytest.raises(ValueError):
        jsonc.loads(text.encode("utf-8"))


def test_values_json_cannot_hold_are_type_errors():
    for value in ({1, 2}, {"a": object()}, b"bytes"):
        with pytest.raises(TypeError):
            json.dumps(value)
        with pytest.raises(TypeError):
            jsonc.dumps(value)
    assert jsonc.dumps(float("nan")) == "NaN" and jsonc.dumps({1: 2}) == '{"1":2}'


def test_the_plain_path_is_json_itself(monkeypatch):
    monkeypatch.setenv("CCM_REPORT_CLIENT", "nats-py")
    assert jsonc.dumps(VALUES[0]) == json.dumps(VALUES[0], separators=(",", ":"), ensure_ascii=False)
    assert jsonc.loads(TEXTS[0]) == json.loads(TEXTS[0])


def test_importing_and_using_it_imports_neither_json_nor_re():
    code = ("import sys; from ccm import jsonc; jsonc.loads(jsonc.dumps({'a': [1, 'x']})); "
            "print(sorted(m for m in ('json', 're', 'enum') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True, check=True,
                         env={"PYTHONPATH": ROOT}, cwd=ROOT)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr
