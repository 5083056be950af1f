"""Expression language: literals, operators, precedence, access, predicates."""
from __future__ import annotations

import math

import pytest

from ccm.expr import ExprError, compile_expr, evaluate

ENV = {
    "Data": {
        "port": 8080,
        "name": "web",
        "list": ["a", "b", "c"],
        "nums": [1, 2, 3, 4, 5],
        "users": [{"name": "alice", "uid": 0}, {"name": "bob", "uid": 5}],
        "nested": {"a": {"b": "deep"}},
        "a-b": "dash",
        "enabled": True,
        "nothing": None,
        "f": 2.5,
    },
    "Facts": {"host": {"info": {"platformFamily": "debian"}}},
    "value": "10.0.0.1",
}


def ev(source, env=None):
    return evaluate(source, ENV if env is None else env)


@pytest.mark.parametrize("source, expected", [
    ("42", 42),
    ("0x1F", 31),
    ("0o17", 15),
    ("0b101", 5),
    ("1_000", 1000),
    ("3.5", 3.5),
    ("1e3", 1000.0),
    ("2.5e-1", 0.25),
    ("'single'", "single"),
    ('"double"', "double"),
    ("`raw \\n`", "raw \\n"),
    ('"tab\\there"', "tab\there"),
    ('"quote \\" inside"', 'quote " inside'),
    ("'it\\'s'", "it's"),
    ('"\\u00e9"', "\u00e9"),
    ('"\\x41"', "A"),
    ("true", True),
    ("false", False),
    ("nil", None),
    ("[1, 'a', true]", [1, "a", True]),
    ("[]", []),
    ("[1, 2,]", [1, 2]),
    ("{a: 1, 'b': 2, \"c\": [3]}", {"a": 1, "b": 2, "c": [3]}),
    ("{}", {}),
    ("{(Data.name): 1}", {"web": 1}),
])
def test_literals(source, expected):
    result = ev(source)
    assert result == expected
    assert type(result) is type(expected)


@pytest.mark.parametrize("source, expected", [
    ("1 + 2 * 3", 7),
    ("(1 + 2) * 3", 9),
    ("10 - 2 - 3", 5),
    ("2 ** 3 ** 2", 512.0),
    ("-2 ** 2", -4.0),
    ("2 ^ 10", 1024.0),
    ("1 + 2 == 3", True),
    ("1 < 2 && 2 < 3", True),
    ("true || false && false", True),
    ("(true || false) && false", False),
    ("not true == false", True),
    ("!false && true", True),
    ("true and not false", True),
    ("false or true", True),
    ("1 + 1 in [2, 3]", True),
    ("(nil ?? 1) + 1", 2),
    ("nil ?? nil ?? 3", 3),
    ("nil ?? 'x' | upper()", "X"),
    ("Data.port > 1024 ? 'high' : 'low'", "high"),
    ("false ? 1 : true ? 2 : 3", 2),
    ("1..3", [1, 2, 3]),
    ("1 + 1..2 + 1", [2, 3]),
    ("3..1", []),
    ("'a' | upper()", "A"),
    ("Data.list | join(',') | upper()", "A,B,C"),
    ("'x' + 'y' == 'xy' ? 'ok' : 'no'", "ok"),
])
def test_precedence(source, expected):
    assert ev(source) == expected


@pytest.mark.parametrize("source, expected", [
    ("Data.port + 1", 8081),
    ("Data.port - 80", 8000),
    ("Data.port * 2", 16160),
    ("Data.port / 2", 4040.0),
    ("6 / 3", 2.0),
    ("7 / 2", 3.5),
    ("7 % 3", 1),
    ("-7 % 3", -1),
    ("7 % -3", 1),
    ("Data.f * 2", 5.0),
    ("1 + 2.5", 3.5),
    ("2 ** 0.5", math.sqrt(2)),
    ("'a' + 'b'", "ab"),
    ("Data.name + ':' + 'x'", "web:x"),
    ("[1] + [2]", [1, 2]),
    ("-Data.port", -8080),
    ("+Data.f", 2.5),
    ("1 / 0", math.inf),
    ("-1 / 0", -math.inf),
])
def test_arithmetic(source, expected):
    result = ev(source)
    assert result == expected
    assert type(result) is type(expected)


@pytest.mark.parametrize("source, expected", [
    ("1 == 1", True),
    ("1 == 1.0", True),
    ("1 == '1'", False),
    ("'a' == 'a'", True),
    ("'a' != 'b'", True),
    ("nil == nil", True),
    ("Data.nothing == nil", True),
    ("Data.missing == nil", True),
    ("Data.port != nil", True),
    ("true == 1", False),
    ("[1, 2] == [1, 2]", True),
    ("{a: 1} == {a: 1}", True),
    ("Data.list == ['a', 'b', 'c']", True),
    ("1 < 2", True),
    ("2 <= 2", True),
    ("3 > 2.5", True),
    ("2 >= 3", False),
    ("'abc' < 'abd'", True),
    ("Data.port > Data.f", True),
    ("Data.name >= Data.name", True),
])
def test_comparison(source, expected):
    assert ev(source) is expected


@pytest.mark.parametrize("source, expected", [
    ("'b' in Data.list", True),
    ("'z' in Data.list", False),
    ("'z' not in Data.list", True),
    ("'port' in Data", True),
    ("'nope' in Data", False),
    ("2 in Data.nums", True),
    ("2.0 in Data.nums", True),
    ("Data.name contains 'e'", True),
    ("Data.name startsWith 'we'", True),
    ("Data.name endsWith 'eb'", True),
    ("Data.name endsWith 'x'", False),
    ("'abc' matches '^a.c$'", True),
    ("'abc' matches 'b'", True),
    ("'abc' matches '^b'", False),
    ("value matches '^10\\\\.'", True),
    ("Data.name not contains 'x'", True),
    ("Data.name not startsWith 'w'", False),
    ("Data.name not endsWith 'x'", True),
    ("'abc' not matches '^b'", True),
    ("1 < 2 < 3", True),
    ("1 < 3 < 2", False),
    ("3 > 2 >= 2", True),
])
def test_membership_and_string_operators(source, expected):
    assert ev(source) is expected


@pytest.mark.parametrize("source, expected", [
    ("Data.port", 8080),
    ("Data['port']", 8080),
    ("Data['a-b']", "dash"),
    ("Data.nested.a.b", "deep"),
    ("Data.nested['a'].b", "deep"),
    ("Data.list[0]", "a"),
    ("Data.list[-1]", "c"),
    ("Data.list[-2]", "b"),
    ("Data.list[1:3]", ["b", "c"]),
    ("Data.list[:2]", ["a", "b"]),
    ("Data.list[1:]", ["b", "c"]),
    ("Data.nums[1:-1]", [2, 3, 4]),
    ("Data.nums[-2:]", [4, 5]),
    ("Data.nums[3:1]", []),
    ("Data.name[0]", "w"),
    ("Data.name[1:]", "eb"),
    ("Data.users[1].name", "bob"),
    ("Data.nokey", None),
    ("Data.nokey?.x", None),
    ("Data.nokey?.x.y.z", None),
    ("Data.nested?.a?.b", "deep"),
    ("Data.nokey?.[0]", None),
    ("Data.nokey ?? 'dflt'", "dflt"),
    ("Data.nokey.deeper ?? 'dflt'", "dflt"),
    ("Data.port ?? 1", 8080),
    ("Data.enabled ?? false", True),
    ("Facts.host.info.platformFamily", "debian"),
    ("Data.name ?: 'x'", "web"),
    ("'' ?: 'x'", "x"),
])
def test_member_access(source, expected):
    assert ev(source) == expected


@pytest.mark.parametrize("source, expected", [
    ("filter(Data.nums, # > 3)", [4, 5]),
    ("filter(Data.nums, {# > 3})", [4, 5]),
    ("map(Data.nums, # * 2)", [2, 4, 6, 8, 10]),
    ("map(Data.users, .name)", ["alice", "bob"]),
    ("map(Data.users, {#.name})", ["alice", "bob"]),
    ("any(Data.users, .uid == 0)", True),
    ("all(Data.users, .uid >= 0)", True),
    ("all(Data.users, .uid > 0)", False),
    ("none(Data.users, .uid > 10)", True),
    ("one(Data.users, .uid == 5)", True),
    ("one(Data.nums, # > 1)", False),
    ("count(Data.nums, # % 2 == 1)", 3),
    ("find(Data.users, .uid > 0).name", "bob"),
    ("findIndex(Data.nums, # == 3)", 2),
    ("map(Data.nums, #index)", [0, 1, 2, 3, 4]),
    ("Data.nums | filter(# > 2) | map(# * 10)", [30, 40, 50]),
    ("map([[1, 2], [3]], {len(filter(#, # > 1))})", [1, 1]),
    ("map(Data.list, {upper(#)})", ["A", "B", "C"]),
    ("filter(Data.users, .name startsWith 'a')[0].uid", 0),
    ("reduce(Data.nums, #acc + #)", 15),
    ("sum(Data.nums)", 15),
    ("sum(Data.users, .uid)", 5),
])
def test_predicates(source, expected):
    assert ev(source) == expected


class Entry:
    def __init__(self, port):
        self.Port = port
        self._secret = "hidden"

    def PrometheusFileSD(self):
        return f"sd:{self.Port}"

    def Add(self, n):
        return self.Port + n


def test_method_calls_and_fields_on_objects():
    env = {"entries": lambda: [Entry(1), Entry(2)], "e": Entry(7)}
    assert evaluate("entries()[0].PrometheusFileSD()", env) == "sd:1"
    assert evaluate("e.Port", env) == 7
    assert evaluate("e.Add(3)", env) == 10
    assert evaluate("map(entries(), .Port)", env) == [1, 2]
    with pytest.raises(ExprError, match="cannot fetch _secret"):
        evaluate("e._secret", env)
    with pytest.raises(ExprError, match="method __class__ not found"):
        evaluate("e.__class__()", env)


def test_functions_from_environment():
    env = {"twice": lambda x: x * 2, "Data": {"n": 4}}
    assert evaluate("twice(Data.n)", env) == 8
    assert evaluate("Data.n | twice()", env) == 8


@pytest.mark.parametrize("source, message", [
    ("Data.nokey.x", "cannot fetch x from <nil>"),
    ("Data.list[5]", "index out of range: 5 (array length is 3)"),
    ("Data.list[-4]", "index out of range: -4 (array length is 3)"),
    ("foo(1)", "unknown function foo"),
    ("Missing + 1", "unknown name Missing"),
    ("1 < 'a'", "invalid operation: < (mismatched types int and string)"),
    ("Data.port < Data.name", "invalid operation: < (mismatched types int and string)"),
    ("Data.port + 'x'", None),
    ("Data.port + Data.name", "invalid operation: + (mismatched types int and string)"),
    ("Data.f % 2", "invalid operation: % (mismatched types float64 and int)"),
    ("5 % 0", "integer divide by zero"),
    ("'a' * 3", "invalid operation: * (mismatched types string and int)"),
    ("Data.name && true", "expected bool, but got string"),
    ("!Data.port", "expected bool, but got int"),
    ("Data.port ? 1 : 2", "expected bool, but got int"),
    ("1 in 'abc'", 'operator "in" not defined on string'),
    ("Data.port contains 'x'", "invalid operation: contains"),
    ("Data.list.x", "cannot fetch x from []interface {}"),
])
def test_runtime_errors(source, message):
    with pytest.raises(ExprError) as info:
        ev(source)
    err = info.value
    assert err.expr == source
    if message is not None:
        assert message in str(err)
        assert not str(err).startswith("expr compile error")


@pytest.mark.parametrize("source, message, column", [
    ("a +", "unexpected end of expression", 4),
    ("", "unexpected end of expression", 1),
    ("1 +* 2", "unexpected token '*'", 4),
    ("(1 + 2", "unexpected end of expression", 7),
    ("[1, 2", "unexpected end of expression", 6),
    ("'abc", "literal not terminated", 1),
    ("Data.", "unexpected end of expression", 6),
    ("a b", "unexpected token 'b'", 3),
    ("x ? 1", "unexpected end of expression", 6),
    ("# > 1", "cannot use pointer accessor outside predicate", 1),
    ("1 @ 2", "unrecognized character: '@'", 3),
    ("len()", "not enough arguments to call len", 1),
    ("upper('a', 'b')", "too many arguments to call upper", 1),
    ("'a' matches '('", "error parsing regexp", 13),
    ("12abc", "invalid number", 1),
    ('"\\q"', "invalid char escape", 2),
    ("nil ?? 1 + 2", "Operator (+) and coalesce expressions (??) cannot be mixed", 10),
    ("a not b", "unexpected token 'b'", 7),
])
def test_compile_errors(source, message, column):
    with pytest.raises(ExprError) as info:
        compile_expr(source)
    err = info.value
    assert err.column == column
    assert message in err.message
    assert str(err) == f"expr compile error for '{source}': {err.message} (column {column})"


def test_compile_error_exact_text():
    with pytest.raises(ExprError) as info:
        compile_expr("a +")
    assert str(info.value) == "expr compile error for 'a +': unexpected end of expression (column 4)"


def test_program_is_cached_and_reports_functions():
    program = compile_expr("lookup('x') == upper(Data.name) && filter(Data.nums, len(string(#)) > 0) != nil")
    assert compile_expr("lookup('x') == upper(Data.name) && filter(Data.nums, len(string(#)) > 0) != nil") is program
    assert program.source.startswith("lookup(")
    assert program.function_names == frozenset({"lookup", "upper", "filter", "len", "string"})
    assert compile_expr("a.b.c()").function_names == frozenset()


def test_user_text_never_becomes_python():
    # strings and names reach the generated code only as constants
    assert ev("'__import__(\"os\")'") == '__import__("os")'
    program = compile_expr("Data['); import os; (']")
    assert "import os" not in program.python_source
    assert program.run(ENV) is None


def test_short_circuit():
    calls = []

    def spy(value):
        calls.append(value)
        return True

    env = {"spy": spy}
    assert evaluate("false && spy(1)", env) is False
    assert evaluate("true || spy(2)", env) is True
    assert evaluate("true ? 1 : spy(3)", env) == 1
    assert evaluate("1 ?? spy(4)", env) == 1
    assert calls == []


def test_run_errors_are_template_errors():
    from ccm.model.errors import TemplateError
    with pytest.raises(TemplateError):
        ev("Data.nokey.x")


class Registrations(list):
    def PrometheusFileSD(self):
        return "[sd]"


@pytest.mark.parametrize("source", [
    "Data.name.upper()",
    "Data.name.format('{0.__class__}')",
    "Data.list.append(1)",
    "Data.list.pop()",
    "Data.port.bit_length()",
    "Data.nested.keys()",
])
def test_no_python_methods_on_plain_data(source):
    with pytest.raises(ExprError, match="method .* not found on"):
        ev(source)


def test_no_python_attributes_on_plain_data():
    with pytest.raises(ExprError, match="cannot fetch real from int"):
        ev("Data.port.real")
    with pytest.raises(ExprError, match="cannot fetch upper from string"):
        ev("Data.name.upper")


def test_methods_on_list_subclasses():
    env = {"registrations": lambda *a: Registrations([{"Port": 80}])}
    assert evaluate("registrations('a', 'b', 'c', '*').PrometheusFileSD()", env) == "[sd]"
    assert evaluate("registrations()[0].Port", env) == 80
    assert evaluate("len(registrations())", env) == 1


def test_deep_nesting_is_a_compile_error_not_a_crash():
    source = "(" * 3000 + "1" + ")" * 3000
    with pytest.raises(ExprError, match="nested too deeply"):
        compile_expr(source)


def test_long_flat_expression_compiles():
    assert evaluate(" + ".join(["1"] * 150), {}) == 150
    assert evaluate("Data.a.b.c.d.e.f.g.h" + " + 1" * 90, {"Data": {"a": {"b": {"c": {"d": {"e": {"f": {"g": {"h": 0}}}}}}}}}) == 90
    assert evaluate(" && ".join(["true"] * 1000), {}) is True
    assert evaluate(" || ".join(["false"] * 999 + ["true"]), {}) is True
    assert evaluate("false || true && false", {}) is False


@pytest.mark.parametrize("source, expected", [
    ("filter(Data.users, .uid > 0 && .name != 'x')[0].name", "bob"),
    ("any(Data.users, {.name == 'bob'})", True),
    ("map(Data.users, {.name + ':' + string(.uid)})", ["alice:0", "bob:5"]),
    ("map(Data.users, .missing?.x)", [None, None]),
    ("map(Data.nums, # > 2 ? 'big' : 'small')", ["small", "small", "big", "big", "big"]),
    ("filter(Data.nums, # in [1, 5])", [1, 5]),
    ("count(Data.users, (.uid ?? 0) > 1)", 1),
])
def test_predicate_forms(source, expected):
    assert ev(source) == expected


def test_non_dict_mapping_environment():
    from types import MappingProxyType
    env = MappingProxyType({"Data": MappingProxyType({"a": {"b": 1}}), "f": lambda: 2})
    assert evaluate("Data.a.b + f()", env) == 3
    assert evaluate("Data.nokey", env) is None


@pytest.mark.parametrize("source", ["Data.in", "Data.not", "Data.true", "{in: 1}.in"])
def test_keyword_member_names(source):
    env = {"Data": {"in": 1, "not": 1, "true": 1}}
    assert evaluate(source, env) == 1
