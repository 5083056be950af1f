"""goss matchers: a table of (expected rule, what the system shows, verdict)."""
from __future__ import annotations

import pytest

from ccm.healthcheck.goss import matchers as M

CASES = [
    # plain values: equality with goss' transforms
    (True, True, True),
    (True, False, False),
    ("0644", "0644", True),
    (0, 0, True),
    (0, 1, False),
    (42, "42", True),            # string seen, number wanted -> numeric
    ("55", 55, True),            # number seen, string wanted -> string
    (42.0, 42, True),
    ("true", True, True),
    ("root", "wheel", False),
    # arrays: the rule is a subset of what is seen (contain-elements)
    (["a", "b"], ["c", "b", "a"], True),
    (["a", "d"], ["a", "b"], False),
    (["group2", "group2"], ["group1", "group2"], False),   # duplicates need two elements
    ([{"have-prefix": "b"}], ["foo", "bar"], True),
    (["x"], "x", True),          # a string is a one-element array
    (["x"], True, False),
    # string matchers
    ({"have-prefix": "ng"}, "nginx", True),
    ({"have-prefix": "x"}, "nginx", False),
    ({"have-suffix": "inx"}, "nginx", True),
    ({"contain-substring": "gin"}, "nginx", True),
    ({"contain-substring": "2"}, 42, True),
    ({"match-regexp": r"^\d{2}$"}, 42, True),
    ({"match-regexp": "^a"}, "ba", False),
    # numeric matchers (strings are converted)
    ({"gt": 40}, "42", True),
    ({"lt": 40}, 42, False),
    ({"ge": 42}, 42, True),
    ({"le": 41.5}, 42, False),
    ({"gt": 1}, "not a number", False),
    # logic
    ({"and": [{"gt": 1}, {"lt": 5}]}, 3, True),
    ({"and": [{"gt": 1}, {"lt": 5}]}, 7, False),
    ({"or": [0, 1]}, 1, True),
    ({"or": [0, 1]}, 2, False),
    ({"not": "FAIL"}, "PASS", True),
    ({"not": "FAIL"}, "FAIL", False),
    ({"not": {"contain-element": "bar"}}, ["foo"], True),
    # array matchers
    ({"contain-element": "b"}, ["a", "b"], True),
    ({"contain-element": {"have-prefix": "z"}}, ["a", "b"], False),
    ({"contain-elements": ["a", "b"]}, ["b", "a", "c"], True),
    ({"consist-of": ["foo", {"have-prefix": "m"}, "bar"]}, ["bar", "moo", "foo"], True),
    ({"consist-of": ["foo", "bar"]}, ["bar", "moo", "foo"], False),
    ({"consist-of": ["127.0.0.1"]}, ["127.0.0.1", "::1"], False),
    ({"equal": ["foo", "bar"]}, ["foo", "bar"], True),
    ({"equal": ["foo", "bar"]}, ["bar", "foo"], False),
    ({"equal": "x"}, "x", True),
    # misc
    ({"have-len": 3}, ["a", "b", "c"], True),
    ({"have-len": 3}, "abcd", False),
    ({"have-key": "baz"}, {"foo": "bar", "baz": "bing"}, True),
    ({"have-key-with-value": {"foo": {"have-prefix": "b"}}}, {"foo": "bar"}, True),
    ({"have-key-with-value": {"foo": "x"}}, {"foo": "bar"}, False),
]


@pytest.mark.parametrize("expected,actual,verdict", CASES)
def test_matches(expected, actual, verdict):
    assert M.matches(expected, actual) is verdict


def test_unknown_matcher_is_an_error_not_a_pass():
    with pytest.raises(M.MatcherError, match='unsupported goss matcher "semver-constraint"'):
        M.matches({"semver-constraint": ">1.0"}, "1.2")


PATTERNS = [
    (["foo"], "a\nxfoox\n", []),
    (["!bar"], "a\nfoo\n", []),
    (["!foo"], "a\nfoo\n", ["!foo"]),
    (["/^[Gg]oss$/"], "x\ngoss\n", []),
    (["/^goss$/"], "x\ngoss is\n", ["/^goss$/"]),
    (["!/^a/"], "b\nc", []),
    (["\\!foo"], "a !foo b", []),      # escaped: look for a literal "!foo"
    (["\\!foo"], "a foo b", ["\\!foo"]),
    (["one", "missing", "two"], "one\ntwo\n", ["missing"]),
]


@pytest.mark.parametrize("patterns,text,missed", PATTERNS)
def test_reader_patterns(patterns, text, missed):
    assert M.failed_patterns(patterns, text) == missed


def test_reader_with_matcher_sees_lines():
    ok, _ = M.reader_matches({"contain-element": {"match-regexp": "^root:"}}, "daemon:x\nroot:x:0\n")
    assert ok
    ok, what = M.reader_matches({"consist-of": ["a"]}, "a\nb\n")
    assert not ok and what == '{"consist-of":["a"]}'
