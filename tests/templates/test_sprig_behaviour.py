"""Sprig in the Go engine beyond its documented examples: Go's argument conversion,
must-variants against the lenient plain ones, refused functions, ccm's limits, Go types."""
from __future__ import annotations

import pytest

from ccm.templates.gotmpl import GoTemplateError, render_go


def render(src: str, dot: object = None) -> str:
    return render_go(src, {} if dot is None else dot, name="t")


def error_of(src: str, dot: object = None) -> str:
    with pytest.raises(GoTemplateError) as info:
        render(src, dot)
    return str(info.value)


@pytest.mark.parametrize("src,message", [
    # text/template converts each argument to the parameter's Go type
    ('{{ upper 5 }}', 'at <5>: expected string; found 5'),
    ('{{ repeat "x" "y" }}', 'at <"x">: expected integer; found "x"'),
    ('{{ repeat 1.5 "y" }}', "expected integer; found 1.5"),
    ('{{ ternary 1 2 "yes" }}', 'expected bool; found "yes"'),
    ('{{ .n | upper }}', "wrong type for value; expected string; got int"),
    ('{{ upper .missing }}', "invalid value; expected string"),
    ('{{ until (add 1 2) }}', "wrong type for value; expected int; got int64"),   # add returns int64
    ('{{ get (splitList "," "a") "x" }}', "wrong type for value; expected map[string]interface {}; got []string"),
    ('{{ upper }}', "wrong number of args for upper: want 1 got 0"),
    ('{{ substr 1 }}', "wrong number of args for substr: want 3 got 1"),
    ('{{ default }}', "wrong number of args for default: want at least 1 got 0"),
    # Sprig's own failures
    ('{{ first 5 }}', "error calling first: Cannot find first on type int"),
    ('{{ mustFirst "s" }}', "error calling mustFirst: Cannot find first on type string"),
    ('{{ chunk 2 "s" }}', "error calling chunk: Cannot chunk type string"),
    ('{{ concat (list 1) 2 }}', "error calling concat: Cannot concat type int as list"),
    ('{{ slice "hello" 1 }}', "error calling slice: list should be type of slice or array but string"),
    ('{{ div 1 0 }}', "error calling div: runtime error: integer divide by zero"),
    ('{{ substr -1 10 "hello" }}', "error calling substr: runtime error: slice bounds out of range [:10] with length 5"),
    ('{{ substr 3 2 "hello" }}', "error calling substr: runtime error: slice bounds out of range [3:2]"),
    ('{{ dig "a" (dict) }}', "error calling dig: dig needs at least three arguments"),
    ('{{ semver "x.y" }}', "error calling semver: Invalid Semantic Version"),
    ('{{ semverCompare "!! 1" "1.0.0" }}', "error calling semverCompare: improper constraint: !! 1"),
    ('{{ urlParse "%zz" }}', 'unable to parse url: parse "%zz": invalid URL escape "%zz"'),
    ('{{ mustToDate "2006-01-02" "x" }}',
     'error calling mustToDate: parsing time "x" as "2006-01-02": cannot parse "x" as "2006"'),
    ('{{ now | mustDateModify "soon" }}', 'error calling mustDateModify: time: invalid duration "soon"'),
    ('{{ mustFromJson "{bad" }}',
     "error calling mustFromJson: invalid character 'b' looking for beginning of object key string"),
    ('{{ mustRegexFind "(" "x" }}', "error calling mustRegexFind: error parsing regexp: missing closing ): `(`"),
    ('{{ regexFind "(" "x" }}', "error calling regexFind: regexp: Compile(`(`): error parsing regexp: missing closing )"),
    ('{{ mustToJson .f }}', "error calling mustToJson: json: unsupported value: NaN"),
])
def test_errors_are_gos(src: str, message: str) -> None:
    assert message in error_of(src, {"n": 5, "f": float("nan")})


@pytest.mark.parametrize("src,want", [
    # the plain variants swallow what the must variants report
    ('{{ fromJson "{bad" }}', "<no value>"),
    ('{{ toJson .f }}', ""),
    ('{{ regexMatch "(" "x" }}', "false"),
    ('{{ toDate "2006-01-02" "x" }}', "0001-01-01 00:00:00 +0000 UTC"),
    ('{{ $t := toDate "2006-01-02" "2020-01-02" }}{{ $t | dateModify "soon" | date "2006" }}', "2020"),
    ('{{ b64dec "a!k=" }}', "illegal base64 data at input byte 1"),
    # Sprig quirks kept: a plain int is no int64 for duration, nor for durationRound
    ("{{ duration 95 }} {{ duration (add 95 0) }} {{ durationRound 5 }}", "0s 1m35s 0s"),
    # literals convert to the parameter type; Go's typed results print as Go prints them
    ("{{ repeat 2.0 \"ab\" }} {{ typeOf (until 2) }} {{ typeOf (split \",\" \"a\") }} {{ kindOf (add 1 1) }}",
     "abab []int map[string]string int64"),
    ("{{ add 9223372036854775807 1 }}", "-9223372036854775808"),   # int64 wraps
    ('{{ has 1 (list (add 0 1)) }} {{ has 1 (list 1) }}', "false true"),   # reflect.DeepEqual: int64 is no int
    ('{{ title "o\'neil is-here" }} {{ upper "straße" }}', "O'Neil Is-Here STRAßE"),
    ('{{ trunc 2 "héllo" }}', "h\ufffd"),   # Go counts bytes; the cut half of é shows as U+FFFD
    ("{{ now | typeOf }} {{ now | kindOf }} {{ semver \"1.0.0\" | typeOf }}", "time.Time struct *semver.Version"),
    ('{{ list "a" 1 | toStrings | join "," }} {{ cat "a" .missing 2 }}', "a,1 a 2"),
    ('{{ regexReplaceAll "x*" "abxd" "-" }} {{ regexFindAll "x*" "abxd" -1 | len }}', "-a-b-d- 4"),
    ('{{ regexReplaceAll "a(?P<n>x*)b" "-axb-" "[$n]" }} {{ regexReplaceAll "(a)" "a" "$1x" }}', "-[x]- "),
    ('{{ regexMatch "a$" "a\\n" }} {{ regexMatch "(?m)a$" "a\\n" }} {{ regexMatch "\\\\d" "\u0663" }}',
     "false true false"),
    ("{{ toPrettyJson (list) }} {{ toJson (dict) }}", "[] {}"),
    ('{{ substr 0 10 "hello" }} {{ substr -1 2 "hello" }} {{ substr 3 -1 "hello" }}', "hello he lo"),
])
def test_plain_variants_and_go_values(src: str, want: str) -> None:
    assert render(src, {"f": float("nan")}) == want


def test_time_json_uses_rfc3339_and_the_local_zone(monkeypatch: pytest.MonkeyPatch) -> None:
    import time

    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    try:
        assert render('{{ toJson (dict "t" (toDate "2006-01-02" "2020-01-02")) }}') == '{"t":"2020-01-02T00:00:00Z"}'
        assert render('{{ dateInZone "2006-01-02 15:04 MST" (toDate "2006-01-02" "2020-07-01") "Europe/Zurich" }}') \
            == "2020-07-01 02:00 CEST"
        assert render('{{ dateInZone "15:04 MST" 0 "Nowhere/Bad" }}') == "00:00 UTC"   # unknown zone: UTC
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()


REFUSED = ["bcrypt", "htpasswd", "genPrivateKey", "buildCustomCert", "genCA", "genCAWithKey", "genSelfSignedCert",
           "genSelfSignedCertWithKey", "genSignedCert", "genSignedCertWithKey", "encryptAES", "decryptAES",
           "getHostByName"]


@pytest.mark.parametrize("name", REFUSED)
def test_refused_functions_name_themselves(name: str) -> None:
    message = error_of('{{ %s "a" "b" }}' % name)
    assert f"error calling {name}: {name} is not supported by ccm: " in message


def test_htpasswd_checks_the_username_first_as_sprig_does() -> None:
    assert render('{{ htpasswd "a:b" "pw" }}') == "invalid username: a:b"


@pytest.mark.parametrize("src,message", [
    ('{{ repeat 100000000 "ab" }}', "repeat: result of 200000000 characters exceeds the limit"),
    ("{{ until 100000000 }}", "untilStep: result of 100000000 items exceeds the limit"),
    ("{{ seq 1 100000000 }}", "untilStep: result of 100000000 items exceeds the limit"),
    ("{{ randAlphaNum 100000000 }}", "random string: result of 100000000 characters exceeds the limit"),
    ('{{ regexMatch "^(a+)+$" "aaaa" }}', "nests a quantifier inside a repeated group"),
    ('{{ regexMatch "a{1001}" "a" }}', "invalid repeat count: `{1001}`"),
    ('{{ regexMatch "(?=a)" "a" }}', "invalid or unsupported Perl syntax: `(?=`"),
    ('{{ regexMatch "(a)\\\\1" "aa" }}', "invalid escape sequence: `\\1`"),
])
def test_limits_and_re2_refusals(src: str, message: str) -> None:
    # regexMatch swallows compile errors (false); its must variant shows them
    src = src.replace("regexMatch", "mustRegexMatch")
    assert message in error_of(src)


def test_regex_search_is_bounded_in_time() -> None:
    # overlapping alternatives the static check does not catch: the timer stops it
    message = error_of('{{ mustRegexMatch "^(a|a?)*b$" .s }}', {"s": "a" * 40})
    assert "ran longer than" in message


def test_integers_read_from_yaml_are_go_ints() -> None:
    """YAML integers are int subclasses remembering their text: still Go ints for Sprig."""
    from ccm.yamlio import TextInt

    dot = {"n": TextInt(2, "2"), "xs": [TextInt(1, "1")]}
    assert render('{{ repeat .n "ab" }} {{ until .n }} {{ has 1 .xs }} {{ typeOf .n }}', dot) == "abab [0 1] true int"


def test_user_functions_override_sprig_and_sprig_overrides_builtins() -> None:
    assert render('{{ upper "x" }}') == "X"
    assert render_go('{{ upper "x" }}', {}, functions={"upper": lambda s: "U"}) == "U"
    assert render("{{ slice (list 1 2 3) 1 }}") == "[2 3]"   # Sprig's slice, not text/template's
