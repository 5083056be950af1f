from __future__ import annotations

import copy

import pytest

from ccm.data.merge import deep_merge, shallow_merge


@pytest.mark.parametrize(
    "left,right,expected",
    [
        ({"a": 1}, {"b": 2}, {"a": 1, "b": 2}),
        ({"a": {"x": 1, "y": 1}}, {"a": {"y": 2}}, {"a": {"x": 1, "y": 2}}),
        ({"a": [1, 2]}, {"a": [3]}, {"a": [1, 2, 3]}),
        ({"a": [1]}, {"a": "s"}, {"a": "s"}),
        ({"a": {"x": 1}}, {"a": None}, {"a": None}),
        ({"a": 1}, {"a": {"x": 1}}, {"a": {"x": 1}}),
        ([1], [2], [1, 2]),
        ({"a": 1}, [1], [1]),
        ({}, {}, {}),
    ],
)
def test_deep_merge_table(left, right, expected):
    assert deep_merge(left, right) == expected


def test_deep_merge_never_mutates_or_shares():
    left = {"a": {"l": [1]}, "only_left": {"k": [1]}}
    right = {"a": {"l": [2]}, "only_right": {"k": [2]}}
    lcopy, rcopy = copy.deepcopy(left), copy.deepcopy(right)
    out = deep_merge(left, right)
    assert left == lcopy and right == rcopy
    out["only_left"]["k"].append(99)
    out["only_right"]["k"].append(99)
    out["a"]["l"].append(99)
    assert left == lcopy and right == rcopy


def test_shallow_merge_replaces_top_level_keys():
    out = shallow_merge({"a": {"x": 1}, "b": [1]}, {"a": {"y": 2}})
    assert out == {"a": {"y": 2}, "b": [1]}
