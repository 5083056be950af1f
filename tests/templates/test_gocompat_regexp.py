"""Go's regexp (RE2 on Python's re), net/url and Masterminds semver in ccm.gocompat.

Expected values are what Go's ``regexp``, ``net/url`` and ``semver`` give."""
from __future__ import annotations

import pytest

from ccm.gocompat import regexp as R
from ccm.gocompat import semver, url


@pytest.mark.parametrize("pattern,text,n,want", [
    ("a.", "paranormal", -1, ["ar", "an", "al"]),     # Go's regexp docs
    ("a.", "paranormal", 2, ["ar", "an"]),
    ("x*", "abxd", -1, ["", "", "x", ""]),             # an empty match right after a match is skipped
    ("[[:digit:]]+", "a12b345", -1, ["12", "345"]),
    ("\\d+", "a\u0663b1", -1, ["1"]),                  # \d is ASCII in RE2
    ("(?i)straße", "STRASSE STRAßE", -1, ["STRAßE"]),
    ("\\Qa.b\\E", "a.b axb", -1, ["a.b"]),
    ("\\x{41}\\101", "AA", -1, ["AA"]),
])
def test_find_all(pattern: str, text: str, n: int, want: list) -> None:
    assert R.find_all(R.compile(pattern), text, n) == want


@pytest.mark.parametrize("pattern,text,repl,want", [
    ("a(x*)b", "-ab-axxb-", "T", "-T-T-"),             # Go's ReplaceAllString examples
    ("a(x*)b", "-ab-axxb-", "$1", "--xx-"),
    ("a(x*)b", "-ab-axxb-", "$1W", "---"),              # $1W names group "1W"
    ("a(x*)b", "-ab-axxb-", "${1}W", "-W-xxW-"),
    ("a(?P<x>x*)b", "-axb-", "[$x][${x}]$$", "-[x][x]$-"),
    ("", "abc", "-", "-a-b-c-"),
    ("b*", "abc", "-", "-a-c-"),
])
def test_replace_all(pattern: str, text: str, repl: str, want: str) -> None:
    assert R.replace_all(R.compile(pattern), text, repl) == want


@pytest.mark.parametrize("pattern,text,n,want", [
    ("a", "banana", -1, ["b", "n", "n", ""]),          # Go's Split examples
    ("a", "banana", 0, []),
    ("a", "banana", 1, ["banana"]),
    ("a", "banana", 2, ["b", "nana"]),
    ("z+", "pizza", -1, ["pi", "a"]),
    ("z+", "pizza", 0, []),
    ("z+", "pizza", 1, ["pizza"]),
    ("z+", "pizza", 2, ["pi", "a"]),
    ("", "abc", -1, ["a", "b", "c"]),
])
def test_split(pattern: str, text: str, n: int, want: list) -> None:
    assert R.split(R.compile(pattern), text, n) == want


def test_anchors_follow_re2() -> None:
    assert R.compile("a$").search("a\n") is None            # re's $ would match before the newline
    assert R.compile("(?m)a$").search("a\nb") is not None
    assert R.compile("a\\z").search("a") is not None
    assert R.compile("x(?i)y").search("xY") and not R.compile("x(?i)y").search("XY")
    assert R.quote_meta(r"Escaping $5\.[]") == r"Escaping \$5\\\.\[\]"


@pytest.mark.parametrize("pattern,message", [
    ("(a", "error parsing regexp: missing closing ): `(a`"),
    ("a)", "error parsing regexp: unexpected ): `a)`"),
    ("a{1001}", "error parsing regexp: invalid repeat count: `{1001}`"),
    ("(?=x)", "error parsing regexp: invalid or unsupported Perl syntax: `(?=`"),
    ("(?<!x)", "error parsing regexp: invalid or unsupported Perl syntax: `(?<`"),
    ("(a)\\1", "error parsing regexp: invalid escape sequence: `\\1`"),
    ("\\8", "error parsing regexp: invalid escape sequence: `\\8`"),
    ("[[:foo:]]", "error parsing regexp: invalid character class range: `[:foo:]`"),
    ("\\pL", "error parsing regexp: ccm does not support Unicode classes: `\\pL`"),
    ("(?U)a+", "error parsing regexp: ccm does not support the ungreedy flag: `(?U)`"),
])
def test_compile_errors(pattern: str, message: str) -> None:
    with pytest.raises(R.RegexpError) as info:
        R.compile(pattern)
    assert str(info.value) == message


@pytest.mark.parametrize("raw,fields", [
    ("http://admin:secret@server.com:8080/api?list=false#anchor",
     ("http", "server.com:8080", "server.com", "/api", "list=false", "", "anchor", "admin:secret")),
    ("mailto:someone@example.com", ("mailto", "", "", "", "", "someone@example.com", "", "")),
    ("HTTPS://h/a%20b/c?q=1%202#f%21", ("https", "h", "h", "/a b/c", "q=1%202", "", "f!", "")),
    ("https://[::1]:443/x", ("https", "[::1]:443", "::1", "/x", "", "", "", "")),
    ("/just/a/path", ("", "", "", "/just/a/path", "", "", "", "")),
])
def test_url_parse(raw: str, fields: tuple) -> None:
    u = url.parse(raw)
    assert (u.scheme, u.host, u.hostname(), u.path, u.raw_query, u.opaque, u.fragment, u.userinfo()) == fields


@pytest.mark.parametrize("raw", ["http://admin:secret@server.com:8080/api?list=false#anchor",
                                 "https://h/a%20b/c?q=1#frag", "mailto:x@y", "http://h", "/p?q"])
def test_url_round_trip(raw: str) -> None:
    assert url.parse(raw).string() == raw


@pytest.mark.parametrize("raw,message", [
    ("%zz", 'parse "%zz": invalid URL escape "%zz"'),
    ("http://h:port/", 'parse "http://h:port/": invalid port ":port" after host'),
    (":x", 'parse ":x": missing protocol scheme'),
    ("1a:b", 'parse "1a:b": first path segment in URL cannot contain colon'),
])
def test_url_errors(raw: str, message: str) -> None:
    with pytest.raises(url.URLError) as info:
        url.parse(raw)
    assert str(info.value) == message


@pytest.mark.parametrize("text,want", [
    ("1.2.3", "1.2.3"), ("v1.2", "1.2.0"), ("1", "1.0.0"), ("1.2.3-beta.1+b5", "1.2.3-beta.1+b5"),
])
def test_semver_versions(text: str, want: str) -> None:
    assert str(semver.new_version(text)) == want


@pytest.mark.parametrize("a,b,want", [
    ("1.2.3", "1.2.4", -1), ("1.2.3-alpha", "1.2.3", -1), ("1.2.3-alpha.10", "1.2.3-alpha.9", 1),
    ("1.2.3-alpha.1", "1.2.3-alpha.beta", -1), ("1.2.3+a", "1.2.3+b", 0),
])
def test_semver_compare(a: str, b: str, want: int) -> None:
    assert semver.new_version(a).Compare(semver.new_version(b)) == want
