"""Template scanning and the string / typed / match modes (spec §3.1, §3.2)."""
from __future__ import annotations

import pytest

from ccm.expr import ExprError
from ccm.model.errors import TemplateError
from ccm.templates import (
    check_template, has_expressions, hiera_environment, make_environment, render_match,
    render_string, render_typed, render_value,
)
from ccm.templates.scan import Expression, scan


@pytest.fixture
def env():
    return make_environment(
        facts={"host": {"info": {"platformFamily": "debian"}}},
        data={"list": ["a", "b", "c"], "nullkey": None, "port": 8080, "name": "web", "enabled": True,
              "users": [{"name": "alice", "uid": 1}, {"name": "bob", "uid": 2}],
              "tmpl": "{{ Data.port }}", "xs": [1, 2, 3]},
        environ={"HOME": "/root"},
        working_dir="/tmp",
    )


@pytest.mark.parametrize("text, parts", [
    ("plain", ("plain",)),
    ("costs $5", ("costs $5",)),
    ("{{ a }}", (Expression("a", 0),)),
    ("${ a }", (Expression("a", 0),)),
    ("x{{a}}y", ("x", Expression("a", 1), "y")),
    ("{{ a } b }}", (Expression("a } b", 0),)),
    ("${ map(xs, {# + 1}) }", (Expression("map(xs, {# + 1})", 0),)),
    ("${{ a }}", ("$", Expression("a", 1))),
    ("{{ '}}' }}", (Expression("'}}'", 0),)),
    ('{{ "a}}b" }}', (Expression('"a}}b"', 0),)),
    ("{{ `}}` }}", (Expression("`}}`", 0),)),
    ("{{ 'it\\'s }}' }}", (Expression("'it\\'s }}'", 0),)),
    ("${ '}' }", (Expression("'}'", 0),)),
    ("{{ unterminated", ("{{ unterminated",)),
    ("${ unterminated", ("${ unterminated",)),
    ("{{ a }} {{ b", (Expression("a", 0), " {{ b")),
    ("{{ b ${ c }", ("{{ b ", Expression("c", 5))),
    ("{{  }}", (Expression("", 0),)),
    ("{{ \"unterminated }}", ('{{ "unterminated }}',)),
    ("a{{x}}${y}b", ("a", Expression("x", 1), Expression("y", 6), "b")),
])
def test_scan(text, parts):
    assert scan(text) == parts


@pytest.mark.parametrize("text, expected", [
    ("plain", False),
    ("costs $5", False),
    ("{{ x", False),
    ("{{ x }}", True),
    ("${x}", True),
    ("${{ x }}", True),
])
def test_has_expressions(text, expected):
    assert has_expressions(text) is expected


@pytest.mark.parametrize("text, expected", [
    ("x={{ Data.list }}", "x=[a b c]"),
    ("{{ lookup('data.users.#.name') }}", "[alice bob]"),
    ("{{ Data.nullkey }}", "<nil>"),
    ("[{{ Environ.NOKEY }}]", "[]"),
    ("{{ 6 / 3 }}", "2"),
    ("{{ Data.port / 2 }}", "4040"),
    ("port {{ Data.port + 1 }}", "port 8081"),
    ("${ Data.name }:{{ Data.port }}", "web:8080"),
    ("${ map(Data.xs, {# + 1}) }", "[2 3 4]"),
    ("costs $5", "costs $5"),
    ("${{ Data.port }}", "$8080"),
    ("{{ Data.tmpl }}", "{{ Data.port }}"),  # results are never re-scanned
    ("{{ Data.enabled }}", "true"),
    ("{{ Data.users }}", "[map[name:alice uid:1] map[name:bob uid:2]]"),
    ("{{ Facts.host.info.platformFamily }}", "debian"),
    ("{{ lookup('facts.host.info.platformFamily') }}", "debian"),
    ("{{ Environ.HOME }}", "/root"),
    ("{{ WorkingDir }}", "/tmp"),
    ("  {{ Data.port }}  ", "  8080  "),
    ("{{ toJSON(Data.xs) }}", "[\n  1,\n  2,\n  3\n]"),
])
def test_render_string(env, text, expected):
    assert render_string(text, env) == expected


@pytest.mark.parametrize("text, expected", [
    ("{{ Data.port }}", 8080),
    ("  {{ Data.port + 1 }}  ", 8081),
    ("${ Data.port / 2 }", 4040.0),
    ("{{ Data.enabled }}", True),
    ("{{ Data.list }}", ["a", "b", "c"]),
    ("{{ Data.users[0] }}", {"name": "alice", "uid": 1}),
    ("{{ Data.nokey }}", None),
    ("{{ lookup('data.port') }}", 8080),
    ("port {{ Data.port }}", "port 8080"),
    ("{{ Data.port }}{{ Data.port }}", "80808080"),
    ("", ""),
    ("plain", "plain"),
])
def test_render_typed(env, text, expected):
    result = render_typed(text, env)
    assert result == expected
    assert type(result) is type(expected)


@pytest.mark.parametrize("text, facts, expected", [
    ("default", {}, ("default", True)),
    ("", {}, ("", False)),
    ("env:%{env}", {}, ("env:%{env}", True)),
    ("env:{{ lookup('facts.env') }}", {"env": "prod"}, ("env:prod", True)),
    ("env:{{ lookup('facts.env') }}", {}, ("env:", False)),
    ("role:${ lookup('facts.role') }", {"role": "web"}, ("role:web", True)),
    ("{{ lookup('facts.a') }}-{{ lookup('facts.b') }}", {"b": "x"}, ("-x", True)),
    ("{{ lookup('facts.n') }}", {"n": 0}, ("0", True)),
    ("{{ lookup('facts.f') }}", {"f": False}, ("false", True)),
    ("x{{ Facts.nothing }}", {}, ("x<nil>", False)),
])
def test_render_match(text, facts, expected):
    assert render_match(text, hiera_environment(facts)) == expected


def test_render_value_walks_containers(env):
    value = {"a": "{{ Data.port }}", "b": ["x{{ Data.name }}", 3, {"c": "${ Data.enabled }"}], "d": None}
    assert render_value(value, env) == {"a": "8080", "b": ["xweb", 3, {"c": "true"}], "d": None}
    assert render_value(value, env, typed=True) == {"a": 8080, "b": ["xweb", 3, {"c": True}], "d": None}
    assert value["a"] == "{{ Data.port }}"  # input not modified


def test_check_template_compiles_without_running():
    check_template("plain")
    check_template("{{ Data.nokey.x }} ${ unknownFunction() }")  # run-time problems are not checked
    with pytest.raises(ExprError) as info:
        check_template("ok {{ Data.port + }}")
    assert str(info.value) == "expr compile error for 'Data.port +': unexpected end of expression (column 12)"
    assert info.value.column == 12
    with pytest.raises(TemplateError):
        check_template("{{  }}")


@pytest.mark.parametrize("text, message", [
    ("{{ Data.nokey.x }}", "cannot fetch x from <nil>"),
    ("{{ Data.nokey }}", "Data has no key 'nokey'"),
    ("{{ Data.list[5] }}", "index out of range: 5 (array length is 3)"),
    ("{{ nosuch(1) }}", "unknown function nosuch"),
    ("{{ lookup('data.missing') }}", "missing key 'data.missing' in environment"),
    ("{{ Data.port + }}", "expr compile error for 'Data.port +'"),
])
def test_render_errors(env, text, message):
    with pytest.raises(TemplateError) as info:
        render_string(text, env)
    assert message in str(info.value)
