"""Expressions cannot exhaust memory or time: size caps and bounded regular expressions."""
from __future__ import annotations

import time

import pytest

from ccm.expr import ExprError, evaluate


@pytest.mark.parametrize("expr, fragment", [
    ('repeat("x", 1000000000)', "repeat: result of 1000000000 characters exceeds the limit"),
    ("1..100000000", "..: result of 100000000 items exceeds the limit"),
    ('replace(repeat("a", 1000000), "a", repeat("b", 100))', "replace: result of 100000000 characters"),
    ('x matches "^(a+)+$"', "regular expression `^(a+)+$` nests a quantifier"),
    ('x matches "(\\\\w+\\\\s?)*$"', "nests a quantifier"),
    ("x matches y", "regular expression `^(a*)*$` nests a quantifier"),
])
def test_runaway_expressions_fail_fast_naming_the_expression(expr, fragment):
    start = time.monotonic()
    with pytest.raises(ExprError) as err:
        evaluate(expr, {"x": "a" * 30 + "b", "y": "^(a*)*$"})
    assert time.monotonic() - start < 1.0
    assert fragment in str(err.value) and expr in str(err.value)


def test_overlapping_alternation_is_stopped_by_the_time_bound():
    start = time.monotonic()
    try:
        evaluate("x matches y", {"x": "a" * 40 + "!", "y": "^(a|a?)+$"})
    except ExprError as err:
        assert "ran longer than" in str(err)
    assert time.monotonic() - start < 2.0


@pytest.mark.parametrize("expr, value", [
    ('repeat("ab", 3)', "ababab"), ("len(1..1000)", 1000), ('"aaa" matches "^a+$"', True),
    ('"k=v" matches "^(\\\\w+)=(\\\\w+)$"', True),
])
def test_ordinary_expressions_are_untouched(expr, value):
    assert evaluate(expr, {}) == value
