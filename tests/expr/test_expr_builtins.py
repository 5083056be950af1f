"""Builtin functions and validators."""
from __future__ import annotations

import datetime

import pytest

from ccm.expr import BUILTIN_FUNCTIONS, ExprError, evaluate
from ccm.gocompat.time import GoTime

ENV = {
    "Data": {
        "list": ["a", "b", "c"],
        "nums": [3, 1, 2],
        "m": {"b": 2, "a": 1},
        "s": "  padded  ",
        "html": {"k": "<a & b>"},
    },
}


def ev(source):
    return evaluate(source, ENV)


@pytest.mark.parametrize("source, expected", [
    ("len('abc')", 3),
    ("len('h\u00e9')", 3),  # Go len(): bytes
    ("len(Data.list)", 3),
    ("len(Data.m)", 2),
    ("upper('aBc')", "ABC"),
    ("lower('AbC')", "abc"),
    ("trim(Data.s)", "padded"),
    ("trim('xxhixx', 'x')", "hi"),
    ("trimPrefix('foobar', 'foo')", "bar"),
    ("trimPrefix('foobar', 'bar')", "foobar"),
    ("trimSuffix('foobar', 'bar')", "foo"),
    ("split('a,b,c', ',')", ["a", "b", "c"]),
    ("split('a,b,c', ',', 2)", ["a", "b,c"]),
    ("split('abc', '')", ["a", "b", "c"]),
    ("join(Data.list, '-')", "a-b-c"),
    ("join(Data.list)", "abc"),
    ("join([1, 2.5, true], ' ')", "1 2.5 true"),
    ("replace('aaa', 'a', 'b')", "bbb"),
    ("replace('aaa', 'a', 'b', 2)", "bba"),
    ("repeat('ab', 3)", "ababab"),
    ("repeat('ab', 0)", ""),
    ("indexOf('hello', 'l')", 2),
    ("indexOf('hello', 'z')", -1),
    ("indexOf('h\u00e9llo', 'l')", 3),  # byte offset
    ("lastIndexOf('hello', 'l')", 3),
    ("abs(-5)", 5),
    ("abs(-2.5)", 2.5),
    ("abs(3)", 3),
    ("int('42')", 42),
    ("int(3.9)", 3),
    ("int(-3.9)", -3),
    ("int(7)", 7),
    ("float('1.5')", 1.5),
    ("float(2)", 2.0),
    ("float('1e3')", 1000.0),
    ("float('0x1p-2')", 0.25),
    ("int('-12')", -12),
    ("string(42)", "42"),
    ("string(2.0)", "2"),
    ("string(Data.list)", "[a b c]"),
    ("string(nil)", "<nil>"),
    ("string(true)", "true"),
    ("keys(Data.m)", ["a", "b"]),
    ("values(Data.m)", [1, 2]),
    ("first(Data.list)", "a"),
    ("last(Data.list)", "c"),
    ("first([])", None),
    ("last([])", None),
    ("max(Data.nums)", 3),
    ("min(4, 2, 8)", 2),
    ("sort(Data.nums)", [1, 2, 3]),
    ("sort(Data.nums, 'desc')", [3, 2, 1]),
    ("reverse(Data.list)", ["c", "b", "a"]),
    ("uniq([1, 1, 2, 1])", [1, 2]),
    ("flatten([1, [2, [3]]])", [1, 2, 3]),
    ("concat([1], [2, 3])", [1, 2, 3]),
    ("type(1)", "int"),
    ("type('x')", "string"),
    ("hasPrefix('abc', 'ab')", True),
    ("hasSuffix('abc', 'bc')", True),
    ("count([true, false, true])", 2),
    ("sortBy([{n: 2}, {n: 1}], .n)", [{"n": 1}, {"n": 2}]),
    ("groupBy([1, 2, 3], # % 2)", {1: [1, 3], 0: [2]}),
])
def test_builtins(source, expected):
    result = ev(source)
    assert result == expected
    assert type(result) is type(expected)


@pytest.mark.parametrize("source, expected", [
    ("toJSON(Data.m)", '{\n  "a": 1,\n  "b": 2\n}'),
    ("toJSON([1, 'x'])", '[\n  1,\n  "x"\n]'),
    ("toJSON('s')", '"s"'),
    ("toJSON(nil)", "null"),
    ("toJSON([])", "[]"),
    ("toJSON({})", "{}"),
    ("toJSON(Data.html)", '{\n  "k": "\\u003ca \\u0026 b\\u003e"\n}'),
    ("toJSON('\u00e9')", '"\u00e9"'),
    ("toJSON(2.0)", "2"),
    ("toJSON([0.5, 1e21, 1e20, 1e-7, 0.000001, -0.0])", "[\n  0.5,\n  1e+21,\n  100000000000000000000,\n  1e-7,\n  0.000001,\n  -0\n]"),
    ("toJSON(fromJSON('{\"n\": 3}'))", '{\n  "n": 3\n}'),
    ("toJSON({1: 'a'})", '{\n  "1": "a"\n}'),
    ("toJSON('line\\nbreak \"q\"')", '"line\\nbreak \\"q\\""'),
    ("toJSON({b: {d: 1, c: 2}, a: true})", '{\n  "a": true,\n  "b": {\n    "c": 2,\n    "d": 1\n  }\n}'),
])
def test_to_json(source, expected):
    assert ev(source) == expected


def test_from_json_numbers_become_floats():
    assert ev("fromJSON('{\"a\": 1, \"b\": [2, \"x\"]}')") == {"a": 1.0, "b": [2.0, "x"]}
    assert type(ev("fromJSON('1')")) is float
    with pytest.raises(ExprError, match="fromJSON"):
        ev("fromJSON('{bad')")


def test_now_behaves_like_go_time():
    value = ev("now()")
    assert isinstance(value, GoTime)
    assert value.dt.tzinfo is not None
    assert ev("now().Year()") >= 2024
    assert isinstance(ev("now().Unix()"), int)


def test_go_time_format_and_string():
    t = GoTime.from_datetime(datetime.datetime(2024, 3, 5, 14, 7, 9, 120000, tzinfo=datetime.timezone.utc))
    env = {"t": t}
    assert str(t) == "2024-03-05 14:07:09.12 +0000 UTC"
    assert evaluate("t.Format('2006-01-02')", env) == "2024-03-05"
    assert evaluate("t.Format('Jan _2 3:04PM Mon')", env) == "Mar  5 2:07PM Tue"
    assert evaluate("t.Format('15:04:05.000 -07:00')", env) == "14:07:09.120 +00:00"
    assert evaluate("toJSON(t)", env) == '"2024-03-05T14:07:09.12Z"'
    assert evaluate("string(t)", env) == "2024-03-05 14:07:09.12 +0000 UTC"
    tz = datetime.timezone(datetime.timedelta(hours=-5, minutes=-30))
    local = GoTime.from_datetime(datetime.datetime(2024, 12, 31, 0, 0, 0, tzinfo=tz))
    assert local.Format("2006-01-02T15:04:05Z07:00") == "2024-12-31T00:00:00-05:30"


@pytest.mark.parametrize("source, message", [
    ("repeat('a', -1)", "negative Repeat count"),
    ("upper(1)", "invalid argument for upper (type int)"),
    ("int('x')", 'strconv.Atoi: parsing "x": invalid syntax'),
    ("float('x')", 'strconv.ParseFloat: parsing "x": invalid syntax'),
    ("int(' 42')", 'strconv.Atoi: parsing " 42": invalid syntax'),
    ("int('4_2')", 'strconv.Atoi: parsing "4_2": invalid syntax'),
    ("int('4.2')", 'strconv.Atoi: parsing "4.2": invalid syntax'),
    ("float('1_0')", 'strconv.ParseFloat: parsing "1_0": invalid syntax'),
    ("len(1)", "invalid argument for len (type int)"),
    ("keys([])", "cannot get keys from slice"),
    ("values('x')", "cannot get values from string"),
    ("toJSON(1 / 0)", "json: unsupported value: +Inf"),
    ("abs('x')", "invalid argument for abs (type string)"),
    ("filter(1, # > 0)", "cannot iterate over int in filter"),
    ("filter([1], #)", "expected bool, but got int"),
])
def test_builtin_errors(source, message):
    with pytest.raises(ExprError) as info:
        ev(source)
    assert message in str(info.value)


def test_builtin_names():
    for name in ("len", "upper", "lower", "trim", "trimPrefix", "trimSuffix", "split", "join",
                 "replace", "repeat", "indexOf", "abs", "int", "float", "string", "keys", "values",
                 "first", "last", "toJSON", "fromJSON", "all", "any", "none", "one", "filter",
                 "map", "count", "now", "isIP", "is_ip", "isFQDN", "is_fqdn", "isShellSafe",
                 "is_shellsafe"):
        assert name in BUILTIN_FUNCTIONS
    assert "lookup" not in BUILTIN_FUNCTIONS


V = "value"


@pytest.mark.parametrize("fn, value, expected", [
    ("isIP", "10.0.0.1", True),
    ("isIP", "::1", True),
    ("isIP", "nope", False),
    ("isIP", "10.0.0.256", False),
    ("isIPv4", "10.0.0.1", True),
    ("isIPv4", "::ffff:10.0.0.1", True),
    ("isIPv4", "::1", False),
    ("isIPv4", "x", False),
    ("isIPv6", "::1", True),
    ("isIPv6", "2001:db8::1", True),
    ("isIPv6", "10.0.0.1", False),
    ("isIPv6", "::ffff:10.0.0.1", False),
    ("isInt", "42", True),
    ("isInt", "-42", True),
    ("isInt", "+7", True),
    ("isInt", "4.2", False),
    ("isInt", "", False),
    ("isInt", " 4", False),
    ("isFloat", "1.5", True),
    ("isFloat", "1e3", True),
    ("isFloat", "inf", True),
    ("isFloat", "NaN", True),
    ("isFloat", "0x1p-2", True),
    ("isFloat", "42", True),
    ("isFloat", "abc", False),
    ("isFloat", "", False),
    ("isDuration", "10s", True),
    ("isDuration", "1h30m", True),
    ("isDuration", "2d", True),
    ("isDuration", "0", True),
    ("isDuration", "10", False),
    ("isDuration", "soon", False),
    ("isShellSafe", "hello world", True),
    ("isShellSafe", "  x  ", True),
    ("isShellSafe", "a;b", False),
    ("isShellSafe", "$(x)", False),
    ("isShellSafe", "a|b", False),
    ("isShellSafe", "a`b", False),
    ("isShellSafe", "a&b", False),
    ("isShellSafe", "a>b", False),
    ("isShellSafe", "a\nb", False),
    ("isHostname", "web-1", True),
    ("isHostname", "web-1.example.com", True),
    ("isHostname", "-web", False),
    ("isHostname", "web_1", False),
    ("isHostname", "", False),
    ("isFQDN", "web.example.com", True),
    ("isFQDN", "web.example.com.", True),
    ("isFQDN", "web", False),
    ("isFQDN", "1.2.3.4", False),
])
def test_validators(fn, value, expected):
    assert evaluate(f"{fn}(value)", {"value": value}) is expected
    snake = {"isIP": "is_ip", "isIPv4": "is_ipv4", "isIPv6": "is_ipv6", "isInt": "is_int",
             "isFloat": "is_float", "isDuration": "is_duration", "isShellSafe": "is_shellsafe",
             "isHostname": "is_hostname", "isFQDN": "is_fqdn"}[fn]
    assert evaluate(f"{snake}(Value)", {"Value": value}) is expected


def test_validators_compose_with_boolean_operators():
    expr = "isIPv4(value) || isIPv6(value)"
    assert evaluate(expr, {"value": "::1"}) is True
    assert evaluate(expr, {"value": "10.1.1.1"}) is True
    assert evaluate(expr, {"value": "host"}) is False


def test_is_regex():
    assert evaluate("isRegex(value, '^[a-z]+$')", {"value": "abc"}) is True
    assert evaluate("is_regex(value, 'b')", {"value": "abc"}) is True  # unanchored
    assert evaluate("isRegex(value, '^b')", {"value": "abc"}) is False
    with pytest.raises(ExprError, match='invalid regex "\\("'):
        evaluate("isRegex(value, '(')", {"value": "abc"})
