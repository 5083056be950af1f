"""rpmvercmp against the cases of rpm's own test suite (rpm 4.x ``tests/rpmvercmp.at``),
plus epoch:version-release comparison and the spec's generic compare."""
from __future__ import annotations

import pytest

from ccm.resources.package import genericversion, rpmversion

RPM_SUITE = [
    ("1.0", "1.0", 0), ("1.0", "2.0", -1), ("2.0", "1.0", 1),
    ("2.0.1", "2.0.1", 0), ("2.0", "2.0.1", -1), ("2.0.1", "2.0", 1),
    ("2.0.1a", "2.0.1a", 0), ("2.0.1a", "2.0.1", 1), ("2.0.1", "2.0.1a", -1),
    ("5.5p1", "5.5p1", 0), ("5.5p1", "5.5p2", -1), ("5.5p2", "5.5p1", 1),
    ("5.5p10", "5.5p10", 0), ("5.5p1", "5.5p10", -1), ("5.5p10", "5.5p1", 1),
    ("10xyz", "10.1xyz", -1), ("10.1xyz", "10xyz", 1),
    ("xyz10", "xyz10", 0), ("xyz10", "xyz10.1", -1), ("xyz10.1", "xyz10", 1),
    ("xyz.4", "xyz.4", 0), ("xyz.4", "8", -1), ("8", "xyz.4", 1), ("xyz.4", "2", -1), ("2", "xyz.4", 1),
    ("5.5p2", "5.6p1", -1), ("5.6p1", "5.5p2", 1), ("5.6p1", "6.5p1", -1), ("6.5p1", "5.6p1", 1),
    ("6.0.rc1", "6.0", 1), ("6.0", "6.0.rc1", -1),
    ("10b2", "10a1", 1), ("10a2", "10b2", -1),
    ("1.0aa", "1.0aa", 0), ("1.0a", "1.0aa", -1), ("1.0aa", "1.0a", 1),
    ("10.0001", "10.0001", 0), ("10.0001", "10.1", 0), ("10.1", "10.0001", 0),
    ("10.0001", "10.0039", -1), ("10.0039", "10.0001", 1),
    ("4.999.9", "5.0", -1), ("5.0", "4.999.9", 1),
    ("20101121", "20101121", 0), ("20101121", "20101122", -1), ("20101122", "20101121", 1),
    ("2_0", "2_0", 0), ("2.0", "2_0", 0), ("2_0", "2.0", 0),
    ("a", "a", 0), ("a+", "a+", 0), ("a+", "a_", 0), ("a_", "a+", 0),
    ("+a", "+a", 0), ("+a", "_a", 0), ("_a", "+a", 0), ("+_", "+_", 0), ("_+", "+_", 0), ("_+", "_+", 0),
    ("+", "_", 0), ("_", "+", 0),
    ("1.0~rc1", "1.0~rc1", 0), ("1.0~rc1", "1.0", -1), ("1.0", "1.0~rc1", 1),
    ("1.0~rc1", "1.0~rc2", -1), ("1.0~rc2", "1.0~rc1", 1),
    ("1.0~rc1~git123", "1.0~rc1~git123", 0), ("1.0~rc1~git123", "1.0~rc1", -1), ("1.0~rc1", "1.0~rc1~git123", 1),
    ("1.0^", "1.0^", 0), ("1.0^", "1.0", 1), ("1.0", "1.0^", -1),
    ("1.0^git1", "1.0^git1", 0), ("1.0^git1", "1.0", 1), ("1.0", "1.0^git1", -1),
    ("1.0^git1", "1.0^git2", -1), ("1.0^git2", "1.0^git1", 1),
    ("1.0^git1", "1.01", -1), ("1.01", "1.0^git1", 1),
    ("1.0^20160101", "1.0^20160101", 0), ("1.0^20160101", "1.0.1", -1), ("1.0.1", "1.0^20160101", 1),
    ("1.0^20160101^git1", "1.0^20160101^git1", 0),
    ("1.0^20160102", "1.0^20160101^git1", 1), ("1.0^20160101^git1", "1.0^20160102", -1),
    ("1.0~rc1^git1", "1.0~rc1^git1", 0), ("1.0~rc1^git1", "1.0~rc1", 1), ("1.0~rc1", "1.0~rc1^git1", -1),
    ("1.0^git1~pre", "1.0^git1~pre", 0), ("1.0^git1", "1.0^git1~pre", 1), ("1.0^git1~pre", "1.0^git1", -1),
    ("1b.fc17", "1b.fc17", 0), ("1b.fc17", "1.fc17", -1), ("1.fc17", "1b.fc17", 1),
    ("1g.fc17", "1g.fc17", 0), ("1g.fc17", "1.fc17", 1), ("1.fc17", "1g.fc17", -1),
]


@pytest.mark.parametrize("a,b,want", RPM_SUITE)
def test_rpmvercmp_suite(a, b, want):
    assert rpmversion.rpmvercmp(a, b) == want


@pytest.mark.parametrize("a,b,want", [
    ("5.8", "5.8-9.el9", 0),            # a missing release is not compared
    ("5.8-9.el9", "5.8-10.el9", -1),
    ("1:5.8-9.el9", "5.9-1.el9", 1),     # epoch first
    ("0:5.8-9.el9", "5.8-9.el9", 0),
    ("6.22.03-6.el9", "6.22.3-6.el9", 0),
])
def test_evr_compare(a, b, want):
    assert rpmversion.compare(a, b) == want
    assert rpmversion.compare(b, a) == -want


def test_parse_evr():
    assert rpmversion.parse_evr("2:1.0-3.el9") == (2, "1.0", "3.el9")
    assert rpmversion.parse_evr("1.0") == (0, "1.0", None)


@pytest.mark.parametrize("a,b,want", [
    ("1.0", "1.0", 0), ("1.0", "1.1", -1), ("1.10", "1.9", 1),
    ("1.01", "1.1", -1),        # leading zero: string comparison of the tokens
    ("1-2", "1.2", -1),         # '-' before '.'
    ("1.2", "1a", -1),          # '.' before anything else
    ("1.0A", "1.0a", -1),       # tokens equal ignoring case; whole strings decide
    ("5.9-8+b18", "5.9-8+b18", 0),
    ("1.0", "1.0.1", -1),
])
def test_generic_compare(a, b, want):
    assert genericversion.compare(a, b) == want
