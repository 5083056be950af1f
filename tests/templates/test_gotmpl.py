"""Go text/template renderer: constructs, builtins, printf, Sprig helpers, errors."""
from __future__ import annotations

import pytest

from ccm.model.errors import TemplateError
from ccm.templates.gotmpl import GoTemplateError, go_sprintf, render_go

FACTS = {"hostname": "h1", "os": {"name": "debian", "release": 12}}
DATA = {
    "xs": ["a", "b"],
    "ints": [1, 2],
    "m": {"b": 2, "a": 1},
    "n": None,
    "port": 8080,
    "ratio": 2.5,
    "flag": True,
    "off": False,
    "empty": [],
    "emptymap": {},
    "blank": "",
    "users": [{"name": "alice", "uid": 1}, {"name": "bob", "uid": 2}],
    "nested": {"x": {"y": "deep"}},
}
ROOT = {"facts": FACTS, "Facts": FACTS, "data": DATA, "Data": DATA, "environ": {"HOME": "/root"},
        "Environ": {"HOME": "/root"}}


def render(src: str, **kw) -> str:
    return render_go(src, ROOT, **kw)


CASES = [
    # text, fields on plain dicts, $, literals
    ("plain", "plain"),
    ("", ""),
    ("{{ .facts.hostname }} {{ .facts.os.name }} {{ .Data.port }}", "h1 debian 8080"),
    ("{{ .data.xs }} {{ .data.m }} {{ .data.users }}", "[a b] map[a:1 b:2] [map[name:alice uid:1] map[name:bob uid:2]]"),
    ("{{ .data.ratio }} {{ .facts.os.release }}", "2.5 12"),
    ("{{ $.facts.hostname }} {{ $.data.nested.x.y }}", "h1 deep"),
    ('{{ "s" }} {{ `raw\\n` }} {{ 42 }} {{ -5 }} {{ 1.0 }} {{ 1e3 }} {{ 0x10 }} {{ \'a\' }} {{ true }}',
     "s raw\\n 42 -5 1 1000 16 97 true"),
    ('{{ "a\\tb" }}', "a\tb"),
    ("x {{-3}}", "x -3"),  # no space after the dash: a number, not a trim marker
    ("x {{-\t3 }}\n", "x3\n"),  # Go accepts any space character after the dash
    # nil and missing keys outside Data/Facts print <no value> (a missing Data/Facts key is an error: ERRORS)
    ("{{ .nokey.deeper }}|{{ .data.n }}|{{ with .data }}{{ .nokey }}{{ end }}", "<no value>|<no value>|<no value>"),
    ('{{ index .data "zz" }}|{{ index .data "n" }}', "<no value>|<no value>"),
    # variables
    ("{{ $x := .data.port }}{{ $x }}", "8080"),
    ("{{ $x := 1 }}{{ if true }}{{ $x = 2 }}{{ end }}{{ $x }}", "2"),
    ("{{ $x := .data.users }}{{ (index $x 1).name }} {{ $x }}", "bob [map[name:alice uid:1] map[name:bob uid:2]]"),
    ("{{ $u := index .data.users 0 }}{{ $u.name }}", "alice"),
    # if / else if / else
    ("{{ if .data.flag }}yes{{ else }}no{{ end }}", "yes"),
    ("{{ if .data.off }}yes{{ else }}no{{ end }}", "no"),
    ("{{ if .data.empty }}A{{ else if .data.port }}B{{ else }}C{{ end }}", "B"),
    ("{{ if .data.empty }}A{{ else if .data.blank }}B{{ else }}C{{ end }}", "C"),
    ('{{ if "" }}1{{ end }}{{ if 0 }}2{{ end }}{{ if 0.0 }}3{{ end }}{{ if .data.emptymap }}4{{ end }}'
     '{{ if .data.n }}5{{ end }}{{ if .data.nokey }}6{{ end }}{{ if .data.xs }}7{{ end }}', "7"),
    ("{{ if $v := .data.port }}{{ $v }}{{ else }}{{ $v }}none{{ end }}", "8080"),
    # with
    ("{{ with .facts.os }}{{ .name }}/{{ .release }}{{ end }}", "debian/12"),
    ("{{ with .data.empty }}x{{ else }}empty{{ end }}", "empty"),
    ("{{ with .data.nokey }}a{{ else with .data.port }}{{ . }}{{ end }}", "8080"),
    ("{{ with $p := .data.port }}{{ $p }}:{{ . }}{{ end }}", "8080:8080"),
    # range
    ("{{ range .data.xs }}<{{ . }}>{{ end }}", "<a><b>"),
    ("{{ range $i, $v := .data.xs }}{{ $i }}={{ $v }} {{ end }}", "0=a 1=b "),
    ("{{ range $v := .data.xs }}{{ $v }}{{ . }} {{ end }}", "aa bb "),
    ("{{ range $k, $v := .data.m }}{{ $k }}:{{ $v }},{{ end }}", "a:1,b:2,"),
    ("{{ range .data.m }}{{ . }}{{ end }}", "12"),
    ("{{ range .data.users }}{{ .name }}@{{ $.facts.hostname }} {{ end }}", "alice@h1 bob@h1 "),
    ("{{ range .data.empty }}x{{ else }}none{{ end }}", "none"),
    ("{{ range .data.nokey }}x{{ else }}none{{ end }}|{{ range .data.n }}x{{ end }}", "none|"),
    ("{{ range 3 }}{{ . }}{{ end }}", "012"),
    ('{{ range .data.xs }}{{ if eq . "b" }}{{ break }}{{ end }}{{ . }}{{ end }}', "a"),
    ('{{ range .data.xs }}{{ if eq . "a" }}{{ continue }}{{ end }}{{ . }}{{ end }}', "b"),
    ("{{ $n := 0 }}{{ range .data.xs }}{{ $n = len . }}{{ end }}{{ $n }}", "1"),
    ("{{ range $i, $u := .data.users }}{{ range $k, $v := $u }}{{ $i }}{{ $k }}={{ $v }} {{ end }}{{ end }}",
     "0name=alice 0uid=1 1name=bob 1uid=2 "),
    # pipelines and parentheses
    ('{{ .data.port | printf "%s-%d" "p" }}', "p-8080"),
    ('{{ .data.port | printf "%d" | len }}', "4"),
    ('{{ printf "%d" (len .data.xs) }}', "2"),
    ('{{ (index .data.users 1).name }} {{ (.data.nested).x.y }}', "bob deep"),
    ('{{ "x" | printf "%s%s" (printf "%s" "y") }}', "yx"),
    # builtins
    ('{{ and 1 "x" }} {{ and 1 0 "x" }} {{ or 0 "" }}| {{ or "" "y" }} {{ or 0 .data.port }}', "x 0 | y 8080"),
    ("{{ and false (index .data.xs 99) }} {{ or true (index .data.xs 99) }}", "false true"),
    ("{{ not 0 }} {{ not .data.xs }} {{ not .data.empty }}", "true false true"),
    ('{{ eq .data.port 8080 }} {{ eq "a" "b" "a" }} {{ eq 1 2 }} {{ ne 1 2 }} {{ eq true true }}',
     "true true false true true"),
    ('{{ lt 1 2 }} {{ le 2 2 }} {{ gt 1.5 2.5 }} {{ ge "b" "a" }} {{ lt "a" "b" }}', "true true false true true"),
    ('{{ len .data.xs }} {{ len .data.m }} {{ len "héllo" }}', "2 2 6"),
    ('{{ index .data.xs 1 }} {{ index .data.m "a" }} {{ index .data.nested "x" "y" }} {{ index "abc" 1 }}',
     "b 1 deep 98"),
    # Sprig's slice replaces text/template's (template.Funcs wins over builtins): lists only
    ('{{ slice .data.xs 1 }} {{ slice .data.xs 0 1 }} {{ slice .data.xs }}', "[b] [a] [a b]"),
    ('{{ print "a" 1 2 "b" 3 }}', "a1 2b3"),
    ('{{ println 1 "a" }}', "1 a\n"),
    ('{{ html "<a href=\'x\'>\\"&" }}', "&lt;a href=&#39;x&#39;&gt;&#34;&amp;"),
    ('{{ js "<\'\\"=&\\\\" }}', "\\u003C\\'\\\"\\u003D\\u0026\\\\"),
    ('{{ urlquery "a b&c=d" }}', "a+b%26c%3Dd"),
    ('{{ print 1 | html }}', "1"),
    # trim markers, comments
    ("a  {{- 1 -}}  b", "a1b"),
    ("a\n  {{- .data.port }}\n", "a8080\n"),
    ("{{ range .data.xs -}}\n  {{ . }}\n{{- end }}", "ab"),
    ("a{{/* comment */}}b", "ab"),
    ("a {{- /* comment */ -}} b", "ab"),
    ("a{{/* multi\nline {{ .x }} */}}b", "ab"),
    # define / template / block
    ('{{ define "item" }}[{{ . }}]{{ end }}{{ template "item" .data.port }}{{ template "item" "x" }}', "[8080][x]"),
    ('{{ template "item" }}{{ define "item" }}[{{ . }}]{{ end }}', "[<no value>]"),
    ('{{ define "u" }}{{ .name }}={{ $.uid }};{{ end }}{{ range .data.users }}{{ template "u" . }}{{ end }}',
     "alice=1;bob=2;"),
    ('{{ block "b" .data.port }}B{{ . }}{{ end }}', "B8080"),
    ('{{ define "e" }} {{ end }}{{ define "e" }}E{{ end }}{{ template "e" }}', "E"),
    # sprig helpers
    ('{{ .data.nokey | default "d" }} {{ .data.port | default 1 }} {{ "" | default "e" }}', "d 8080 e"),
    ('{{ upper "abc" }} {{ lower "ABC" }} {{ trim "  x  " }} {{ title "hello world" }}', "ABC abc x Hello World"),
    ('{{ trimPrefix "a" "abc" }} {{ trimSuffix "c" "abc" }} {{ trimAll "-" "--x--" }}', "bc ab x"),
    ('{{ quote "a" 1 }} {{ squote "a" }}', '"a" "1" \'a\''),
    ('{{ join "," .data.xs }} {{ .data.xs | join "-" }} {{ "a,b" | splitList "," }}', "a,b a-b [a b]"),
    ('{{ toJson .data.m }} {{ toJson .data.xs }} {{ toJson "<&>" }}', '{"a":1,"b":2} ["a","b"] "\\u003c\\u0026\\u003e"'),
    ("{{ toPrettyJson .data.m }}", '{\n  "a": 1,\n  "b": 2\n}'),
    ('{{ list 1 2 | len }} {{ dict "a" 1 "b" "x" }}', "2 map[a:1 b:x]"),
    ("{{ add 1 2 3 }} {{ sub 5 3 }} {{ mul 2 3 }} {{ div 7 2 }} {{ mod 7 3 }} {{ add1 1 }}", "6 2 6 3 1 2"),
    ('{{ contains "b" "abc" }} {{ hasPrefix "a" "abc" }} {{ hasSuffix "a" "abc" }}', "true true false"),
    ('{{ replace "a" "b" "aaa" }} {{ repeat 3 "ab" }} {{ indent 2 "a\\nb" }}|{{ nindent 2 "a" }}',
     "bbb ababab   a\n  b|\n  a"),
    ('{{ ternary "y" "n" true }} {{ coalesce "" 0 "x" }} {{ empty "" }} {{ empty .data.xs }}', "y x true false"),
    ('{{ b64enc "hi" }} {{ b64dec "aGk=" }} {{ first .data.xs }} {{ last .data.xs }} {{ toString 5 }}',
     "aGk= hi a b 5"),
    ("{{ keys .data.m | sortAlpha }}", "[a b]"),
]


@pytest.mark.parametrize("src,want", CASES, ids=[c[0][:60] for c in CASES])
def test_render(src: str, want: str) -> None:
    assert render(src) == want


PRINTF = [
    ("%s-%d", ("a", 5), "a-5"),
    ("%5s|%-5s|", ("a", "b"), "    a|b    |"),
    ("%05d|%+d|%x|%X|%#x|%o|%b|%c|%U", (-42, 5, 255, 255, 255, 8, 5, 65, 65), "-0042|+5|ff|FF|0xff|10|101|A|U+0041"),
    ("%x", (-255,), "-ff"),
    ("%6.2f|%.0f|%f", (3.14159, 2.5, 1.0), "  3.14|2|1.000000"),
    ("%e|%E|%g|%g|%g", (123456.0, 0.5, 1e6, 100000.0, 0.0001), "1.234560e+05|5.000000E-01|1e+06|100000|0.0001"),
    ("%v|%v|%v|%v", (2.0, [1, "a"], {"b": 1, "a": None}, None), "2|[1 a]|map[a:<nil> b:1]|<nil>"),
    ("%q|%q|%q", ("a\"b\n", 97, "é\x01"), '"a\\"b\\n"|\'a\'|"é\\x01"'),
    ("%x|%X|%.2s", ("hi", "hi", "abc"), "6869|6869|ab"),
    ("%t|%t", (True, 1), "true|%!t(int=1)"),
    ("%d|%d|%s|%s|%f", ("x", 1.5, 5, None, 1), "%!d(string=x)|%!d(float64=1.5)|%!s(int=5)|%!s(<nil>)|%!f(int=1)"),
    ("%d %d", (1,), "1 %!d(MISSING)"),
    ("%d", (1, "x"), "1%!(EXTRA string=x)"),
    ("%z", (1,), "%!z(int=1)"),
    ("100%%", (), "100%"),
    ("%*d|%-*d|", (4, 7, 3, 1), "   7|1  |"),
    ("%s|%d", (["a", "b"], [1, 2]), "[a b]|[1 2]"),
    ("%T %T %T", (1, "s", [1]), "int string []interface {}"),
    ("%f|%v|%5.1f|%+f", (float("inf"), float("-inf"), float("nan"), float("nan")), "+Inf|-Inf|  NaN|+NaN"),
    ("%8.3f|%-8.2e|", (3.14159, 1234.5), "   3.142|1.23e+03|"),
]


@pytest.mark.parametrize("fmt,args,want", PRINTF, ids=[p[0] for p in PRINTF])
def test_printf(fmt: str, args: tuple, want: str) -> None:
    assert go_sprintf(fmt, *args) == want


def test_printf_in_template_with_widths() -> None:
    assert render('{{ printf "%-6s|%6.1f|%3d" "ab" 3.14159 7 }}') == "ab    |   3.1|  7"


def test_custom_delimiters_and_name() -> None:
    assert render("[[ .data.port ]] {{ x }} [[- /* c */ -]] !", left="[[", right="]]") == "8080 {{ x }}!"
    with pytest.raises(GoTemplateError, match="template: page.tmpl:1:1: unclosed action"):
        render("[[ .x", left="[[", right="]]", name="page.tmpl")


def test_delimiter_inside_string_literal() -> None:
    assert render('{{ "a }} b" }}') == "a }} b"


def test_no_html_escaping() -> None:
    assert render_go("{{ . }}", "<a & b>") == "<a & b>"


def test_dot_can_be_any_value() -> None:
    assert render_go("{{ . }}", None) == "<no value>"
    assert render_go("{{ range . }}{{ . }},{{ end }}", [1, 2.5, "x"]) == "1,2.5,x,"
    assert render_go("{{ .a }}", {"a": {"b": 1}}) == "map[b:1]"


def test_functions_are_called_with_pipeline_value_last() -> None:
    calls = []

    def write(path: str, content: str) -> str:
        calls.append((path, content))
        return ""

    funcs = {"write": write, "render": lambda path, data: f"<{path}:{len(data)}>",
             "lookup": lambda path, default=None: {"data.port": 8080}.get(path, default)}
    out = render('{{ write "a.txt" "body" }}{{ "piped" | write "b.txt" }}{{ render "_partials/x" .data.xs }}'
                 ' {{ lookup "data.port" }} {{ lookup "nope" "dflt" }}', functions=funcs)
    assert out == "<_partials/x:2> 8080 dflt"
    assert calls == [("a.txt", "body"), ("b.txt", "piped")]


def test_user_function_overrides_builtin_and_sprig() -> None:
    assert render('{{ upper "x" }}', functions={"upper": lambda s: "U"}) == "U"


def test_object_fields_and_methods() -> None:
    class Entry:
        def __init__(self) -> None:
            self.Address = "10.0.0.1"
            self.Port = 80

        def Join(self, sep: str, other: str) -> str:  # noqa: N802 - Go-style method
            return f"{self.Address}{sep}{other}"

    out = render_go('{{ .e.Address }}:{{ .e.Port }} {{ .e.Join "/" "x" }} {{ "y" | .e.Join "-" }}', {"e": Entry()})
    assert out == "10.0.0.1:80 10.0.0.1/x 10.0.0.1-y"


def test_map_range_uses_sorted_keys() -> None:
    assert render_go("{{ range $k, $v := . }}{{ $k }} {{ end }}", {"zeta": 1, "alpha": 2, "Mid": 3}) == "Mid alpha zeta "


def test_error_is_template_error_with_location() -> None:
    with pytest.raises(TemplateError) as info:
        render_go("line one\n  {{ .a.b.c }}", {"a": {"b": 5}}, name="x.tmpl")
    err = info.value
    assert isinstance(err, GoTemplateError)
    assert (err.template, err.line, err.column) == ("x.tmpl", 2, 6)
    assert str(err) == 'template: x.tmpl:2:6: executing "x.tmpl" at <.a.b.c>: can\'t evaluate field c in type int'


ERRORS = [
    # (source, message fragment, line, column)
    ("ab {{ .data.port ", "template: t:1:4: unclosed action", 1, 4),
    ("{{ foo 1 }}", 'function "foo" not defined', 1, 4),
    ("{{ .data.xs | nosuch }}", 'function "nosuch" not defined', 1, 15),
    ("{{ range true }}{{ end }}", "range can't iterate over true", 1, 10),
    ('{{ range "abc" }}{{ end }}', "range can't iterate over abc", 1, 10),
    ("{{ range $i, $v := 5 }}{{ end }}", "can't use 5 to iterate over more than one variable", 1, 20),
    ("x\n{{ if 1 }}x", "unexpected EOF", 2, 12),
    ("{{ end }}", "unexpected {{end}}", 1, 4),
    ("{{ else }}", "unexpected {{else}}", 1, 4),
    ("{{ $y }}", 'undefined variable "$y"', 1, 4),
    ("{{ if true }}{{ $y := 1 }}{{ end }}{{ $y }}", 'undefined variable "$y"', 1, 39),
    ("{{ $y = 1 }}", 'undefined variable "$y"', 1, 4),
    ("{{ }}", "missing value for command", 1, 1),
    ("{{ 1 2 }}", "can't give argument to non-function 1", 1, 4),
    ("{{ .data.port 1 }}", "port is not a method but has arguments", 1, 4),
    ("{{ .data.port | .data.xs }}", "xs is not a method but has arguments", 1, 17),
    ("{{ .data.port | 1 }}", "non executable command in pipeline stage 2", 1, 17),
    ("{{ len 1 2 }}", "wrong number of args for len: want 1 got 2", 1, 4),
    ("{{ printf }}", "wrong number of args for printf: want at least 1 got 0", 1, 4),
    ("{{ index .data.xs 5 }}", "error calling index: index out of range: 5", 1, 4),
    ('{{ index .data.xs "a" }}', "error calling index: cannot index slice/array with type string", 1, 4),
    ("{{ len 3 }}", "error calling len: len of type int", 1, 4),
    ('{{ slice "hello" 1 3 }}', "error calling slice: list should be type of slice or array but string", 1, 4),
    ('{{ eq 1 "1" }}', "error calling eq: incompatible types for comparison", 1, 4),
    ("{{ eq 1 1.0 }}", "error calling eq: incompatible types for comparison", 1, 4),
    ("{{ lt true false }}", "error calling lt: invalid type for comparison", 1, 4),
    ("{{ eq .data.xs .data.xs }}", "non-comparable type", 1, 4),
    ("{{ .data.port.x }}", "can't evaluate field x in type int", 1, 4),
    ("{{ .data.n.x }}", "nil pointer evaluating interface {}.x", 1, 4),
    ('{{ template "nope" }}', 'no such template "nope"', 1, 4),
    ('{{ define "r" }}{{ template "r" }}{{ end }}{{ template "r" }}', "exceeded maximum template depth", 1, 20),
    ("{{ break }}", "{{break}} outside {{range}}", 1, 4),
    ("{{/* x */ }}", "comment ends before closing delimiter", 1, 1),
    ("{{/* x", "unclosed comment", 1, 1),
    ('{{ "abc }}', "unterminated quoted string", 1, 4),
    ("{{ (1 }}", "unclosed left paren", 1, 4),
    ("{{ 1 % 2 }}", "unrecognized character in action", 1, 6),
    ('{{ "x".y }}', "unexpected . after term", 1, 7),
    ("{{ nil }}", "nil is not a command", 1, 4),
    ("{{ range $a, $b, $c := .x }}{{ end }}", "too many declarations in range", 1, 10),
    ("{{ if $a, $b := .x }}{{ end }}", "too many declarations in if", 1, 7),
    ('{{ define "d" }}a{{ end }}{{ define "d" }}b{{ end }}', 'multiple definition of template "d"', 1, 37),
    # issue 13: a typo in a Data/Facts key is not rendered as <no value>
    ("a {{ .data.nokey }}", ".data has no key 'nokey'", 1, 6),
    ("{{ .Data.prot }}", ".Data has no key 'prot' (did you mean `port`?)", 1, 4),
    ("{{ .facts.os.nam }}", ".facts.os has no key 'nam' (did you mean `name`?)", 1, 4),
    ("{{ range .data.xs }}{{ $.Facts.hostnam }}{{ end }}", "$.Facts has no key 'hostnam'", 1, 24),
]


@pytest.mark.parametrize("src,fragment,line,column", ERRORS, ids=[e[0][:40] for e in ERRORS])
def test_errors(src: str, fragment: str, line: int, column: int) -> None:
    with pytest.raises(GoTemplateError) as info:
        render_go(src, ROOT, name="t")
    assert fragment in str(info.value)
    assert (info.value.line, info.value.column) == (line, column)


def test_function_error_is_wrapped_with_its_message() -> None:
    def lookup(path: str) -> object:
        raise TemplateError(f"lookup: failed: missing key '{path}' in environment")

    with pytest.raises(GoTemplateError) as info:
        render('ok\n{{ lookup "data.x" }}', functions={"lookup": lookup})
    assert str(info.value) == (
        'template: template:2:4: executing "template" at <lookup>: '
        "error calling lookup: lookup: failed: missing key 'data.x' in environment")
    assert isinstance(info.value.__cause__, TemplateError)


def test_runtime_error_inside_defined_template_names_it() -> None:
    with pytest.raises(GoTemplateError, match='executing "inner" at <.x.y>'):
        render_go('{{ define "inner" }}{{ .x.y }}{{ end }}{{ template "inner" . }}', {"x": 5})
