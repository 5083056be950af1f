"""Debian version comparison (``dpkg --compare-versions`` semantics), pure.

Parsing follows the spec's pattern ``[epoch:]upstream[-revision]`` (the revision starts
after the last ``-``). Comparison is dpkg's own ``verrevcmp``: within the non-digit runs
characters are compared one by one with ``~`` < end of string < letters < everything
else; digit runs compare numerically. This deliberately differs from upstream CCM's
fragment rule (letters and punctuation as separate runs), which orders e.g. ``1.0a``
after ``1.0+`` where dpkg and apt order it before; ccm compares an installed version
with apt's candidate, so it must agree with apt. Checked against the real ``dpkg`` in
``tests/resources/package/test_debversion.py``.
"""
from __future__ import annotations

import re
from typing import NamedTuple

_VERSION = re.compile(r"^(?:([0-9]+):)?([.+~0-9a-zA-Z-]+?)(?:-([.+~0-9a-zA-Z]*))?$")
_DIGITS = "0123456789"
_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


class DebVersion(NamedTuple):
    epoch: int
    upstream: str
    revision: str

    def __str__(self) -> str:
        text = f"{self.epoch}:{self.upstream}" if self.epoch else self.upstream
        return f"{text}-{self.revision}" if self.revision else text


def parse(version: str) -> DebVersion:
    if version == "":
        raise ValueError('invalid version "": unable to parse empty string as a debian version identifier')
    m = _VERSION.match(version)
    if not m:
        raise ValueError(f'invalid version "{version}": unable to parse "{version}" as a debian version identifier')
    return DebVersion(int(m.group(1) or 0), m.group(2), m.group(3) or "")


def _order(c: str) -> int:
    if c in _DIGITS:
        return 0
    if c in _LETTERS:
        return ord(c)
    if c == "~":
        return -1
    return ord(c) + 256


def _sign(n: int) -> int:
    return (n > 0) - (n < 0)


def verrevcmp(a: str, b: str) -> int:
    """dpkg's comparison of one upstream or revision part; returns -1, 0 or 1."""
    i = j = 0
    la, lb = len(a), len(b)
    while i < la or j < lb:
        while (i < la and a[i] not in _DIGITS) or (j < lb and b[j] not in _DIGITS):
            ac = _order(a[i]) if i < la else 0
            bc = _order(b[j]) if j < lb else 0
            if ac != bc:
                return _sign(ac - bc)
            i += 1
            j += 1
        while i < la and a[i] == "0":
            i += 1
        while j < lb and b[j] == "0":
            j += 1
        first_diff = 0
        while i < la and a[i] in _DIGITS and j < lb and b[j] in _DIGITS:
            if not first_diff:
                first_diff = ord(a[i]) - ord(b[j])
            i += 1
            j += 1
        if i < la and a[i] in _DIGITS:
            return 1
        if j < lb and b[j] in _DIGITS:
            return -1
        if first_diff:
            return _sign(first_diff)
    return 0


def compare(a: str, b: str) -> int:
    """-1, 0 or 1 as ``a`` sorts before, equal to or after ``b``; ValueError if unparseable."""
    va, vb = parse(a), parse(b)
    if va.epoch != vb.epoch:
        return _sign(va.epoch - vb.epoch)
    return verrevcmp(va.upstream, vb.upstream) or verrevcmp(va.revision, vb.revision)
