"""Jet renderer: every supported construct, Jet's quirks, and error messages."""
from __future__ import annotations

import pytest

from ccm.model.errors import TemplateError
from ccm.templates.jet import JetError, render_jet

DATA = {
    "name": "web",
    "version": "1.2",
    "port": 8080,
    "ratio": 2.5,
    "enabled": True,
    "disabled": False,
    "packages": ["zsh", "vim"],
    "empty": [],
    "emptymap": {},
    "items": {"b": 2, "a": 1, "c": "x"},
    "users": [{"name": "alice", "uid": 1}, {"name": "bob", "uid": 2}],
    "nothing": None,
    "dashed-key": "dk",
    "text": "  Hello World  ",
}
FACTS = {"host": {"info": {"os": "linux"}}, "os": "linux"}
ENV = {"Data": DATA, "Facts": FACTS, "Environ": {"HOME": "/root"}, "WorkingDir": "/wd"}


def render(src: str, **kw) -> str:
    kw.setdefault("context", ENV)
    return render_jet(src, ENV, **kw)


CASES = [
    # output and literals
    ("plain text", "plain text"),
    ("", ""),
    ("[[ Data.name ]] v[[ Data.version ]]", "web v1.2"),
    ('[[ "str" ]] [[ `raw \\n` ]] [[ 42 ]] [[ 1.5 ]] [[ true ]] [[ false ]]', "str raw \\n 42 1.5 true false"),
    ('[[ "a\\tb\\n" ]]', "a\tb\n"),
    ("[[ 'a' ]]", "97"),
    ("[[ 0x1F ]]", "31"),
    ("[[ nil ]]", "<nil>"),
    ("[[ Data.nothing ]]", "<nil>"),
    ("[[ Data.packages ]]", "[zsh vim]"),
    ("[[ Data.items ]]", "map[a:1 b:2 c:x]"),
    ("[[ Data.users ]]", "[map[name:alice uid:1] map[name:bob uid:2]]"),
    ("[[ Data.port * 1.0 ]]", "8080"),
    # field access, context, index, slices
    ("[[ .Data.name ]] [[ .Facts.host.info.os ]]", "web linux"),
    ("[[ Facts.host.info.os ]]", "linux"),
    ('[[ Data["dashed-key"] ]] [[ Data.packages[1] ]] [[ Data.users[0].name ]]', "dk vim alice"),
    ('[[ Data.users[1]["uid"] ]]', "2"),
    ("[[ Data.packages[0:1] ]] [[ Data.packages[1:] ]] [[ Data.packages[:1] ]]", "[zsh] [vim] [zsh]"),
    ('[[ "hello"[1:3] ]] [[ "hello"[1] ]]', "el 101"),
    ("[[ Data.nothing ]]|", "<nil>|"),  # a present null prints <nil>, as upstream
    ('[[ Data["nokey"] ]]|', "|"),
    ("[[ Environ.HOME ]] [[ WorkingDir ]]", "/root /wd"),
    # arithmetic
    ("[[ 1 + 2 * 3 - 4 ]]", "3"),
    ("[[ (1 + 2) * 3 - 4.1 ]]", "4.9"),
    ("[[ Data.port + 1 ]] [[ Data.port - 80 ]]", "8081 8000"),
    ("[[ 7 / 2 ]] [[ -7 / 2 ]] [[ 7.0 / 2 ]] [[ 6 / 3 ]]", "3 -3 3.5 2"),
    ("[[ 7 % 3 ]] [[ -7 % 3 ]]", "1 -1"),
    ("[[ 256 - Data.users[1].uid ]]", "254"),
    ("[[ -Data.port ]] [[ 2 * -3 ]]", "-8080 -6"),
    ('[[ "HELLO" + " " + "WORLD!" ]] [[ "n" + 1 ]]', "HELLO WORLD! n1"),
    # comparisons and logic
    ("[[ Data.port > 80 ]] [[ Data.port < 80 ]] [[ 1 <= 1 ]] [[ 2 >= 3 ]]", "true false true false"),
    ('[[ Facts.os == "linux" ]] [[ Facts.os != "linux" ]]', "true false"),
    ("[[ 1 == 1.0 ]] [[ 1.5 > 1 ]] [[ 1 < 1.5 ]]", "true true true"),
    ("[[ true && false ]] [[ true || false ]] [[ !true ]] [[ !Data.empty ]]", "false true false false"),
    ("[[ Data.enabled && Data.port > 80 || false ]]", "true"),
    ('[[ Data.enabled ? "on" : "off" ]] [[ Data.disabled ? "on" : "off" ]]', "on off"),
    ('[[ Data.nokey ? "set" : "unset" ]]', "unset"),
    # functions, prefix calls, pipelines
    ("[[ len(Data.packages) ]] [[ len(Data.items) ]] [[ len(\"héllo\") ]]", "2 3 6"),
    ("[[ len: Data.packages ]]", "2"),
    ('[[ upper("abc") ]] [[ lower("ABC") ]]', "ABC abc"),
    ('[[ hasPrefix("abc", "ab") ]] [[ hasSuffix("abc", "ab") ]]', "true false"),
    ('[[ repeat("ab", 3) ]] [[ replace("aaa", "a", "b", 2) ]] [[ replace("aaa", "a", "b", -1) ]]',
     "ababab bba bbb"),
    ('[[ split("a,b,c", ",") ]] [[ len(split("a,b,c", ",")) ]]', "[a b c] 3"),
    ("[[ trimSpace(Data.text) ]]|", "Hello World|"),
    ('[[ html("<a href=\'x\'>&</a>") ]]', "&lt;a href=&#39;x&#39;&gt;&amp;&lt;/a&gt;"),
    ('[[ url("a b&c=d/é") ]]', "a+b%26c%3Dd%2F%C3%A9"),
    ("[[ json(Data.items) ]] [[ json(Data.packages) ]]", '{"a":1,"b":2,"c":"x"} ["zsh","vim"]'),
    ('[[ json("<&>") ]] [[ json(2.0) ]] [[ json(nil) ]]', '"\\u003c\\u0026\\u003e" 2 null'),
    ("[[ isset(Data.name) ]] [[ isset(Data.nokey) ]] [[ isset(Data.nothing) ]]", "true false false"),
    ("[[ isset(Data.name, Data.port) ]] [[ isset(Data.name, Data.nokey) ]]", "true false"),
    ("[[ isset(Data.nokey.deeper) ]] [[ isset(.Data.name) ]] [[ isset(undefinedvar) ]]", "false true false"),
    ('[[ map("a", 1, "b", 2) ]] [[ slice(1, "x") ]] [[ ints(1, 4) ]]', "map[a:1 b:2] [1 x] [1 2 3]"),
    ('[[ "Hello" | upper ]] [[ "FOO" | lower | len ]]', "HELLO 3"),
    ('[[ "hello" | repeat: 2 | len ]] [[ "hello" | repeat(2) | len ]]', "10 10"),
    ('[[ 2 | repeat("foo", _) ]] [[ 2 | repeat("foo", _) | repeat(_, 3) ]]', "foofoo foofoofoofoofoofoo"),
    ('[[ Data.name | raw ]]', "web"),
    # variables
    ("[[ name := Data.name ]][[ name ]]", "web"),
    ('[[ x := 1 ]][[ x = x + 1 ]][[ x ]]', "2"),
    ('[[ a, b := 1, "two" ]][[ a ]][[ b ]]', "1two"),
    ('[[ v, ok := Data.items["a"] ]][[ v ]] [[ ok ]] [[ w, ok2 := Data.items["z"] ]][[ ok2 ]]', "1 true false"),
    ('[[ _ := upper("x") ]]done', "done"),
    ('[[ x := 1 ]][[ if true ]][[ x = 2 ]][[ y := 3 ]][[ end ]][[ x ]][[ isset(y) ]]', "2false"),
    ('[[ m := map("k", 1) ]][[ m.k = 5 ]][[ m.k ]]', "5"),
    # if / else if / else
    ("[[ if Data.enabled ]]yes[[ else ]]no[[ end ]]", "yes"),
    ("[[ if Data.disabled ]]yes[[ else ]]no[[ end ]]", "no"),
    ("[[ if Data.port > 80 ]]big[[ end ]]", "big"),
    ('[[ if Facts.os == "windows" ]]w[[ else if Facts.os == "linux" ]]l[[ else ]]o[[ end ]]', "l"),
    ('[[ if false ]]a[[ else if false ]]b[[ else ]]c[[ end ]]', "c"),
    ('[[ if Data.nokey ]]a[[ else ]]b[[ end ]]', "b"),
    ('[[ if "" ]]a[[ else ]]b[[ end ]][[ if 0 ]]a[[ else ]]b[[ end ]][[ if nil ]]a[[ else ]]b[[ end ]]', "bbb"),
    # Jet quirk: a non-nil empty list/map is true (reflect IsZero)
    ('[[ if Data.empty ]]a[[ else ]]b[[ end ]][[ if Data.emptymap ]]a[[ else ]]b[[ end ]]', "aa"),
    ('[[ if x := Data.port; x > 1 ]][[ x ]][[ end ]]', "8080"),
    # range
    ("[[ range Data.packages ]]- [[ . ]]\n[[ end ]]", "- zsh\n- vim\n"),
    ("[[ range i, v := Data.packages ]][[ i ]]:[[ v ]] [[ end ]]", "0:zsh 1:vim "),
    ("[[ range _, pkg := Data.packages ]][[ pkg ]],[[ end ]]", "zsh,vim,"),
    ("[[ range k, v := Data.items ]][[ k ]]=[[ v ]];[[ end ]]", "a=1;b=2;c=x;"),
    # one variable: the index/key, '.' is the value (Jet v6)
    ("[[ range i := Data.packages ]][[ i ]]=[[ . ]] [[ end ]]", "0=zsh 1=vim "),
    ("[[ range k := Data.items ]][[ k ]]=[[ . ]] [[ end ]]", "a=1 b=2 c=x "),
    ("[[ range Data.users ]][[ .name ]]:[[ .uid ]] [[ end ]]", "alice:1 bob:2 "),
    ("[[ range Data.empty ]]x[[ else ]]none[[ end ]]", "none"),
    ("[[ range Data.emptymap ]]x[[ else ]]none[[ end ]]", "none"),
    ("[[ range Data.packages ]]x[[ else ]]none[[ end ]]", "xx"),
    ("[[ range i, v := Data.packages ]][[ end ]][[ isset(v) ]]", "false"),
    ("[[ range ints(0, 3) ]][[ . ]][[ end ]]", "012"),
    ("[[ range _, u := Data.users ]][[ range k, v := u ]][[ k ]]=[[ v ]] [[ end ]]| [[ end ]]",
     "name=alice uid=1 | name=bob uid=2 | "),
    ("[[ i := 0 ]][[ range Data.packages ]][[ i = i + 1 ]][[ end ]][[ i ]]", "2"),
    ("[[ range Data.packages ]][[ Data.name ]][[ end ]]", "webweb"),
    # comments and whitespace trimming
    ("a{* comment [[ nothing ]] *}b", "ab"),
    ("a{* multi\nline *}b", "ab"),
    ("foo [[- \"bar\" -]] baz", "foobarbaz"),
    ("a \n\t [[- 1 ]] \n b", "a1 \n b"),
    ("a [[ 1 -]] \n\t b", "a 1b"),
    ("[[- range Data.packages ]]\n  [[- . ]]\n[[- end ]]", "zshvim"),
    ("[[ 5 - 3 ]]", "2"),
    ("a [[-1]] b", "a -1 b"),  # no space after the dash: a negative number, not a trim marker
    ("a [[-\t1 ]] b", "a -1 b"),  # Jet's markers are exactly "- " and " -"
    # try / catch
    ("[[ try ]]ok[[ end ]]", "ok"),
    ("[[ try ]]lost [[ nope ]][[ end ]]after", "after"),
    ("[[ try ]]lost[[ nope ]][[ catch ]]fallback[[ end ]]", "fallback"),
    ('[[ try ]][[ nope ]][[ catch err ]][[ hasPrefix(err.Error(), "Jet Runtime Error") ]][[ end ]]', "true"),
    # blocks
    ("[[ block hi(who=\"you\") ]]hi [[ who ]];[[ end ]][[ yield hi(who=\"me\") ]][[ yield hi() ]]",
     "hi you;hi me;hi you;"),
    ('[[ yield row("a", 1) ]][[ block row(k, v) ]]<[[ k ]]=[[ v ]]>[[ end ]]', "<a=1><false=false>"),
    ('[[ block ctx() Data.users[0] ]][[ .name ]][[ end ]]', "alice"),
    # return is accepted (only meaningful for exec())
    ('[[ return 1 ]]x', "x"),
]


@pytest.mark.parametrize("src,want", CASES, ids=[c[0][:60] for c in CASES])
def test_render(src: str, want: str) -> None:
    assert render(src) == want


def test_resources_jet_file_example() -> None:
    src = (
        "[[ range _, pkg := Data.packages ]]\n"
        "- package:\n"
        "    name: [[ pkg ]]\n"
        "    ensure: present\n"
        "[[ end ]]"
    )
    want = (
        "\n- package:\n    name: zsh\n    ensure: present\n"
        "\n- package:\n    name: vim\n    ensure: present\n"
    )
    assert render(src) == want


def test_custom_delimiters() -> None:
    assert render("{{ Data.name }} [[ x ]]", left="{{", right="}}") == "web [[ x ]]"
    assert render("<% Data.port %>/<%- 1 -%> end", left="<%", right="%>") == "8080/1end"


def test_delimiter_inside_string_literal() -> None:
    assert render('[[ "a ]] b" ]]') == "a ]] b"


def test_no_html_escaping() -> None:
    assert render_jet("[[ x ]]", {"x": "<a & 'b'>"}) == "<a & 'b'>"


def test_context_defaults_to_none_and_can_be_any_value() -> None:
    assert render_jet("[[ . ]]", {}) == "<nil>"
    assert render_jet("[[ .name ]]", {}, context={"name": "ctx"}) == "ctx"
    assert render_jet("[[ range . ]][[ . ]][[ end ]]", {}, context=[1, 2]) == "12"


def test_scaffold_style_globals_and_context() -> None:
    six = {"facts": FACTS, "Facts": FACTS, "data": DATA, "Data": DATA, "environ": {}, "Environ": {}}
    out = render_jet("[[ facts.os ]] [[ .data.name ]] [[ data.port ]]", six, context=six)
    assert out == "linux web 8080"


def test_functions_argument_and_pipes() -> None:
    calls = []

    def write(path: str, content: str) -> str:
        calls.append((path, content))
        return ""

    def render_partial(path: str, data: object) -> str:
        return f"<{path}:{len(data)}>"

    funcs = {"write": write, "render": render_partial, "double": lambda x: x * 2}
    out = render_jet('[[ write("a.txt", "body " + Data.name) ]][[ render("_partials/x", Data.packages) ]]'
                     "[[ Data.port | double ]] [[ double(2) ]]", ENV, functions=funcs)
    assert out == "<_partials/x:2>16160 4"
    assert calls == [("a.txt", "body web")]


def test_callables_in_variables_are_functions() -> None:
    assert render_jet('[[ greet("bob") ]]', {"greet": lambda n: "hi " + n}) == "hi bob"


def test_function_returning_none_prints_nothing() -> None:
    assert render_jet("a[[ f() ]]b", {}, functions={"f": lambda: None}) == "ab"


def test_user_function_overrides_builtin() -> None:
    assert render_jet('[[ upper("x") ]]', {}, functions={"upper": lambda s: "U"}) == "U"


def test_methods_and_attributes_of_objects() -> None:
    class Entry:
        def __init__(self, address: str, port: int, priority: int):
            self.Address, self.Port, self.Priority = address, port, priority

    class Entries(list):
        def PrometheusFileSD(self) -> str:  # noqa: N802 - upstream method name
            return "sd-json"

    def registrations(*args: str) -> Entries:
        assert args == ("prod", "http", "web", "*")
        return Entries([Entry("10.0.0.1", 80, 10), Entry("10.0.0.2", 81, 6)])

    src = ('[[ range _, e := registrations("prod", "http", "web", "*") ]]'
           "[[ e.Address ]]:[[ e.Port ]] weight [[ 256 - e.Priority ]]\n[[ end ]]"
           '[[ registrations("prod", "http", "web", "*").PrometheusFileSD() ]]')
    out = render_jet(src, {}, functions={"registrations": registrations})
    assert out == "10.0.0.1:80 weight 246\n10.0.0.2:81 weight 250\nsd-json"


def test_include_uses_loader_and_sees_locals() -> None:
    files = {"part.jet": "[[ who ]]:[[ . ]]", "nested.jet": "N([[ include \"part.jet\" ]])"}
    loaded = []

    def loader(path: str) -> str:
        loaded.append(path)
        return files[path]

    out = render_jet('[[ who := "me" ]][[ include "part.jet" ]] [[ include "part.jet" 5 ]] '
                     '[[ include "nested.jet" ]]', {}, context="ctx", loader=loader)
    assert out == "me:ctx me:5 N(me:ctx)"
    assert loaded == ["part.jet", "nested.jet"]  # parsed once per render


def test_include_recursion_is_bounded() -> None:
    with pytest.raises(JetError, match="maximum template depth"):
        render_jet('[[ include "self" ]]', {}, loader=lambda p: '[[ include "self" ]]')


def test_assignment_through_range_does_not_leak_scope() -> None:
    assert render("[[ range Data.packages ]][[ x := . ]][[ end ]][[ isset(x) ]]") == "false"


def test_map_range_order_is_sorted() -> None:
    data = {"m": {"zeta": 1, "alpha": 2, "Mid": 3}}
    assert render_jet("[[ range k, v := m ]][[ k ]] [[ end ]]", data) == "Mid alpha zeta "


def test_jet_error_is_template_error_with_location() -> None:
    with pytest.raises(TemplateError) as info:
        render_jet("line one\n  [[ nope() ]]", {}, name="res.jet")
    err = info.value
    assert isinstance(err, JetError)
    assert (err.template, err.line, err.column) == ("res.jet", 2, 6)
    assert str(err).startswith('Jet Runtime Error ("res.jet":2:6): ')


ERRORS = [
    # (source, message fragment, line, column)
    ("ab [[ Data.name ", "template: t.jet:1:4: unclosed action", 1, 4),
    ("x\n[[ if true ]]y", "unexpected EOF (missing 'end')", 2, 15),
    ("[[ end ]]", "unexpected 'end'", 1, 4),
    ("[[ if true ]]a[[ else ]]b[[ else ]]c[[ end ]]", "unexpected 'else'", 1, 29),
    ("{* never closed", "unclosed comment", 1, 1),
    ('[[ "abc ]]', "unterminated quoted string", 1, 4),
    ("[[ 1 + ]]", "unexpected end of action", 1, 8),
    ("[[ (1 + 2 ]]", "expected ')'", 1, 11),
    ("[[ a b ]]", "unexpected token 'b' (expected end of action)", 1, 6),
    ("[[ 1 $ 2 ]]", "unrecognized character in action", 1, 6),
    ("[[ ]]", "missing value for command", 1, 1),
    ("[[ unknownfn(1) ]]", "identifier 'unknownfn' not available", 1, 4),
    ("[[ unknownvar ]]", "identifier 'unknownvar' not available", 1, 4),
    ("[[ y = 1 ]]", "identifier 'y' is not available in the current scope", 1, 4),
    ("[[ range 5 ]][[ end ]]", "value 5 (type int) is not rangeable", 1, 4),
    ('[[ range "abc" ]][[ end ]]', "value abc (type string) is not rangeable", 1, 4),
    ("[[ range Data.nothing ]][[ end ]]", "cannot range over nil pointer/interface (interface {})", 1, 4),
    ("[[ range Data.nokey ]][[ end ]]", "can't range over invalid value", 1, 4),
    ("[[ .nokey ]]", "there is no field or method 'nokey' in map[string]interface {} (.nokey)", 1, 4),
    ("[[ Data.nokey.deeper ]]", "there is no field or method 'nokey'", 1, 4),
    ("[[ Data.nokey ]]", "Data has no key 'nokey'; a missing key is not rendered into a string", 1, 4),
    ("[[ Data.nothing.x ]]", "there is no field or method 'x' in <nil>", 1, 4),
    ("[[ Data.packages[5] ]]", "slice index out of range (index: 5, len: 2)", 1, 17),
    ('[[ Data.packages["a"] ]]', "non numeric value in index expression", 1, 17),
    ("[[ 1 / 0 ]]", "division by zero", 1, 6),
    ("[[ 5 % 0 ]]", "integer divide by zero", 1, 6),
    ('[[ "a" - 1 ]]', "not allowed with strings", 1, 8),
    ("[[ Data.packages + 1 ]]", "is not a numeric value", 1, 18),
    ("[[ Data.name() ]]", "is not func kind", 1, 4),
    ('[[ lower("a", "b") ]]', "wrong number of arguments for lower (2 given)", 1, 4),
    ("[[ lower(1) ]]", "lower: argument must be a string, not int", 1, 4),
    ('[[ repeat("a", -1) ]]', "negative Repeat count", 1, 4),
    ("[[ len(5) ]]", "len(): invalid value type int", 1, 4),
    ("[[ len(Data.nokey) ]]", "len(): argument is not a valid value", 1, 4),
    ('[[ yield missing() ]]', "unresolved block 'missing'", 1, 4),
    ('[[ include "x.jet" ]]', "no template loader", 1, 4),
    ("[[ import \"x\" ]]", "'import' is not supported", 1, 4),
    ("[[ try ]][[ bad ]][[ catch ]][[ nope ]][[ end ]]", "identifier 'nope' not available", 1, 33),
]


@pytest.mark.parametrize("src,fragment,line,column", ERRORS, ids=[e[0][:40] for e in ERRORS])
def test_errors(src: str, fragment: str, line: int, column: int) -> None:
    with pytest.raises(JetError) as info:
        render_jet(src, ENV, context=ENV, name="t.jet")
    assert fragment in str(info.value)
    assert (info.value.line, info.value.column) == (line, column)
    assert info.value.template == "t.jet"


def test_function_error_aborts_with_its_message() -> None:
    def lookup(path: str) -> object:
        raise TemplateError(f"lookup: failed: missing key '{path}' in environment")

    with pytest.raises(JetError) as info:
        render_jet('ok\n[[ lookup("data.x") ]]', {}, functions={"lookup": lookup})
    assert "lookup: failed: missing key 'data.x' in environment" in str(info.value)
    assert info.value.line == 2
    assert isinstance(info.value.__cause__, TemplateError)


def test_include_loader_failure_is_reported() -> None:
    def loader(path: str) -> str:
        raise FileNotFoundError(f"no such file: {path}")

    with pytest.raises(JetError, match="include: template 'x.jet' was not found: no such file: x.jet"):
        render_jet('[[ include "x.jet" ]]', {}, loader=loader)


def test_parse_error_in_included_template_names_that_template() -> None:
    with pytest.raises(JetError) as info:
        render_jet('[[ include "bad.jet" ]]', {}, loader=lambda p: "\n[[ if ]]")
    assert info.value.template == "bad.jet"
    assert info.value.line == 2


def test_empty_delimiter_is_rejected() -> None:
    with pytest.raises(JetError, match="delimiters must not be empty"):
        render_jet("x", {}, left="")
