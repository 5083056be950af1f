"""Seeded property-based fuzzing: only our own error types (``CCMError``) ever escape.

Targets: the expression compiler/evaluator, the Jet and Go template engines, the GJSON
path evaluator, the Hiera resolver, the YAML loader and the pipe API. The examples per
target come from ``CCM_FUZZ_EXAMPLES`` (``.ci/run``: a small budget; ``make
test-reliability``: larger); runs are derandomized, so a failure replays exactly.
"""
from __future__ import annotations

import os
from typing import Any, Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ccm.model.errors import CCMError

pytestmark = pytest.mark.reliability

EXAMPLES = int(os.environ.get("CCM_FUZZ_EXAMPLES", "300"))
FUZZ = settings(max_examples=EXAMPLES, derandomize=True, deadline=None, database=None,
                suppress_health_check=list(HealthCheck))

EXPR_ATOMS = ["1", "2.5", "'a'", '"b"', "x", "y", "z", "true", "nil", "[1,2]", "{'k': 1}", "..", "+", "-", "*",
              "/", "%", "**", "==", "!=", "<", ">=", "and", "or", "not", "!", "in", "matches", "contains",
              "?:", "??", "?", ":", "(", ")", "[", "]", "{", "}", ",", ".", "len(", "upper(", "repeat(",
              "split(", "join(", "keys(", "int(", "float(", "string(", "lookup(", "abs(", "max(", "filter(",
              "map(", "all(", "#", "1e308", "9" * 30, "'(a+)+$'", "'['", "-1", "0x1F", "1..3", "|"]
TEMPLATE_ATOMS = ["{{", "}}", "[[", "]]", " ", ".", "$", "x", "if", "else", "end", "range", "with", "define",
                  "template", "block", "len", "index", "printf", "\"%d\"", "1", "'a'", "|", "(", ")", ":=",
                  "=", "yield", "include", "import", "extends", "nil", "true", "-", "/*", "*/", "{{-", "-}}",
                  "upper", "toJson", ",", "[", "]", "Data", ".Data.x", "break", "continue", "\\", "\n"]
PATH_ATOMS = ["a", "b", ".", "#", "*", "?", "|", "@", "(", ")", "[", "]", "==", "!=", "%", "!%", ">", "<", "\\",
              "0", "1", "-1", '"', "@this", "@reverse", "#(", "{", "}", ",", "..", "x*"]
YAML_ATOMS = ["a", ":", " ", "\n", "  ", "- ", "[", "]", "{", "}", ",", "&x", "*x", "!!str", "!!int", "'", '"',
              "#", "|", ">", "---", "...", "?", "<<: *x", "0x1", "1e3", "~", "\t", "%YAML 1.2", "\\", "@", "`"]

ENV = {"x": 1, "y": "text", "z": [1, "a", {"k": 2}], "Data": {"x": {"y": 1}}, "Facts": {"a": "b"}}


def texts(atoms):
    return st.lists(st.one_of(st.sampled_from(atoms), st.text(max_size=3)), max_size=24).map("".join)


def only_ours(fn: Callable[[], Any]) -> None:
    try:
        fn()
    except CCMError:
        pass


@FUZZ
@given(texts(EXPR_ATOMS))
def test_expressions(source):
    from ccm.expr import evaluate

    only_ours(lambda: evaluate(source, dict(ENV)))


@FUZZ
@given(texts(TEMPLATE_ATOMS))
def test_jet_templates(source):
    from ccm.templates.jet import render_jet

    only_ours(lambda: render_jet(source, dict(ENV)))


@FUZZ
@given(texts(TEMPLATE_ATOMS))
def test_go_templates(source):
    from ccm.templates.gotmpl import render_go

    only_ours(lambda: render_go(source, dict(ENV)))


@FUZZ
@given(texts(PATH_ATOMS))
def test_gjson_paths(path):
    from ccm.templates import gjson

    doc = {"a": [{"b": 1}, {"b": "x"}], "b": {"c": [1, 2, 3]}, "x*": None}
    only_ours(lambda: gjson.get(doc, path))
    only_ours(lambda: gjson.get('{"a": [1, {"b": 2}]}', path))


@FUZZ
@given(texts(YAML_ATOMS))
def test_yaml_loader(text):
    from ccm import yamlio

    only_ours(lambda: yamlio.load(text, source="fuzz.yaml"))


JSONISH = st.recursive(st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=8),
                                 st.sampled_from(["{{ lookup('a') }}", "{{ x + }}", "{{ 1/0 }}", "os:{{ a }}"])),
                       lambda kids: st.one_of(st.lists(kids, max_size=4),
                                              st.dictionaries(st.text(max_size=6), kids, max_size=4)),
                       max_leaves=20)


@FUZZ
@given(st.fixed_dictionaries({}, optional={"data": JSONISH, "hierarchy": JSONISH, "overrides": JSONISH}))
def test_hiera_resolver(document):
    from ccm.data.hiera import resolve

    only_ours(lambda: resolve(document, {"a": "b", "os": "linux"}, source_name="fuzz.yaml"))


@FUZZ
@given(st.one_of(texts(YAML_ATOMS + ['"protocol"', '"type"', '"properties"', "file", "exec"]),
                 JSONISH.map(lambda v: __import__("json").dumps(
                     {"protocol": "io.choria.ccm.v1.resource.ensure.request", "type": v, "properties": v}))))
def test_pipe_api(text):
    from ccm.cli.ensure_cmd import handle_request

    def factory():
        raise AssertionError("only valid requests build a manager")

    try:
        answer = handle_request(factory, text)
    except AssertionError:
        return
    assert isinstance(answer, dict) and ("error" in answer or "state" in answer)
