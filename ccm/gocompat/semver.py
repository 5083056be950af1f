"""Masterminds ``semver`` v3.3 (what Sprig's ``semver`` and ``semverCompare`` use).

``new_version`` parses loosely as ``semver.NewVersion`` does (``v1.2``, ``1``,
``1.2.3-beta.1+build``); ``Version`` has the Go methods templates call (``Major``,
``Minor``, ``Patch``, ``Prerelease``, ``Metadata``, ``Original``, ``Compare``,
``LessThan`` ..., ``IncPatch`` ...) and prints as ``String()``. ``Constraints`` is
``semver.NewConstraint``: ``||`` alternatives of space- or comma-separated comparisons
(``=``, ``!=``, ``>``, ``<``, ``>=``, ``<=``, ``~``, ``~>``, ``^``), ``x``/``*`` wildcards and
``1.2 - 1.4.5`` ranges, with prereleases only matched by constraints that name one.

Errors are ``SemverError`` with the library's texts. Standard library only.
"""
from __future__ import annotations

import re

from ccm.gocompat.gotypes import GoValue
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Callable, Dict, List, Optional

__all__ = ["SemverError", "Version", "Constraints", "new_version", "new_constraint"]

_VERSION = (r"v?([0-9]+)(\.[0-9]+)?(\.[0-9]+)?"
            r"(-([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?"
            r"(\+([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?\Z")
_CV = (r"v?([0-9|x|X|\*]+)(\.[0-9|x|X|\*]+)?(\.[0-9|x|X|\*]+)?"
       r"(-([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?"
       r"(\+([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?")
_OPS = r"=||!=|>|<|>=|=>|<=|=<|~|~>|\^"
_S = r"[\t\n\f\r ]"   # Go's \s
_PATTERNS = {
    "version": _VERSION,
    "constraint": rf"^{_S}*({_OPS}){_S}*({_CV}){_S}*\Z",
    "range": rf"{_S}*({_CV}){_S}+-{_S}+({_CV}){_S}*",
    "find": rf"({_OPS}){_S}*({_CV})",
    "valid": rf"^({_S}*({_OPS}){_S}*({_CV}){_S}*)((?:{_S}+|,{_S}*)({_OPS}){_S}*({_CV}){_S}*)*\Z",
}


_COMPILED: Dict[str, "re.Pattern[str]"] = {}


def _rx(name: str) -> "re.Pattern[str]":
    """The library's regular expressions, compiled on first use (a render that uses no
    semver function should not pay for them)."""
    compiled = _COMPILED.get(name)
    if compiled is None:
        compiled = _COMPILED[name] = re.compile(_PATTERNS[name], re.ASCII)
    return compiled
_ALLOWED = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-0123456789")
_MAX_U64 = (1 << 64) - 1


class SemverError(ValueError):
    """A version or constraint the semver library rejects."""


class Version(GoValue):
    """A parsed semantic version (Go ``*semver.Version``)."""

    __slots__ = ("major", "minor", "patch", "pre", "metadata", "original")
    GO_TYPE = "*semver.Version"
    GO_KIND = "ptr"

    def __init__(self, major: int, minor: int, patch: int, pre: str = "", metadata: str = "",
                 original: str = "") -> None:
        self.major, self.minor, self.patch = major, minor, patch
        self.pre, self.metadata = pre, metadata
        self.original = original or self.String()

    def String(self) -> str:  # noqa: N802 - Go method names are the API
        text = f"{self.major}.{self.minor}.{self.patch}"
        if self.pre:
            text += "-" + self.pre
        if self.metadata:
            text += "+" + self.metadata
        return text

    def json_value(self) -> str:
        return self.String()

    def Original(self) -> str:  # noqa: N802
        return self.original

    def Major(self) -> int:  # noqa: N802
        return self.major

    def Minor(self) -> int:  # noqa: N802
        return self.minor

    def Patch(self) -> int:  # noqa: N802
        return self.patch

    def Prerelease(self) -> str:  # noqa: N802
        return self.pre

    def Metadata(self) -> str:  # noqa: N802
        return self.metadata

    def _v_prefix(self) -> str:
        return "v" if self.original[:1] == "v" else ""

    def _next(self, major: int, minor: int, patch: int) -> "Version":
        nxt = Version(major, minor, patch)
        nxt.original = self._v_prefix() + nxt.String()
        return nxt

    def IncPatch(self) -> "Version":  # noqa: N802
        return self._next(self.major, self.minor, self.patch if self.pre else self.patch + 1)

    def IncMinor(self) -> "Version":  # noqa: N802
        return self._next(self.major, self.minor + 1, 0)

    def IncMajor(self) -> "Version":  # noqa: N802
        return self._next(self.major + 1, 0, 0)

    def Compare(self, other: Any) -> int:  # noqa: N802
        other = _version_arg(other)
        for a, b in ((self.major, other.major), (self.minor, other.minor), (self.patch, other.patch)):
            if a != b:
                return -1 if a < b else 1
        if not self.pre and not other.pre:
            return 0
        if not self.pre:
            return 1
        if not other.pre:
            return -1
        return _compare_prerelease(self.pre, other.pre)

    def LessThan(self, other: Any) -> bool:  # noqa: N802
        return self.Compare(other) < 0

    def LessThanEqual(self, other: Any) -> bool:  # noqa: N802
        return self.Compare(other) <= 0

    def GreaterThan(self, other: Any) -> bool:  # noqa: N802
        return self.Compare(other) > 0

    def GreaterThanEqual(self, other: Any) -> bool:  # noqa: N802
        return self.Compare(other) >= 0

    def Equal(self, other: Any) -> bool:  # noqa: N802
        return self.Compare(other) == 0

    def __str__(self) -> str:
        return self.String()

    def __repr__(self) -> str:
        return f"Version({self.String()})"


def _version_arg(value: Any) -> Version:
    if isinstance(value, Version):
        return value
    raise SemverError(f"expected a semantic version, got {value!r}")


def _compare_part(s: str, o: str) -> int:
    if s == o:
        return 0
    if s == "":
        return -1
    if o == "":
        return 1
    s_num = s.isdigit() and s.isascii() and int(s) <= _MAX_U64
    o_num = o.isdigit() and o.isascii() and int(o) <= _MAX_U64
    if s_num and o_num:
        return 1 if int(s) > int(o) else -1
    if not s_num and not o_num:
        return 1 if s.encode() > o.encode() else -1
    return -1 if s_num else 1   # numbers sort before identifiers


def _compare_prerelease(a: str, b: str) -> int:
    sa, sb = a.split("."), b.split(".")
    for i in range(max(len(sa), len(sb))):
        d = _compare_part(sa[i] if i < len(sa) else "", sb[i] if i < len(sb) else "")
        if d:
            return d
    return 0


def _validate(pre: str, metadata: str) -> None:
    for part in pre.split(".") if pre else ():
        if part.isdigit() and part.isascii():
            if len(part) > 1 and part[0] == "0":
                raise SemverError("Version segment starts with 0")
        elif not set(part) <= _ALLOWED:
            raise SemverError("Invalid Prerelease string")
    for part in metadata.split(".") if metadata else ():
        if not set(part) <= _ALLOWED:
            raise SemverError("Invalid Metadata string")


def new_version(text: Any) -> Version:
    """``semver.NewVersion``."""
    m = _rx("version").match(text) if isinstance(text, str) else None
    if m is None:
        raise SemverError("Invalid Semantic Version")
    parts = []
    for group in (m.group(1), m.group(2), m.group(3)):
        value = int(group.lstrip(".")) if group else 0
        if value > _MAX_U64:
            raise SemverError(f'Error parsing version segment: strconv.ParseUint: parsing "{group.lstrip(".")}": '
                              "value out of range")
        parts.append(value)
    pre, metadata = m.group(5) or "", m.group(8) or ""
    _validate(pre, metadata)
    return Version(parts[0], parts[1], parts[2], pre, metadata, text)


class _Constraint:
    __slots__ = ("con", "orig", "op", "minor_dirty", "patch_dirty", "dirty")

    def __init__(self, text: str) -> None:
        if not text:
            self.con, self.orig, self.op = Version(0, 0, 0), "", ""
            self.minor_dirty = self.patch_dirty = False
            self.dirty = True
            return
        m = _rx("constraint").match(text)
        if m is None:
            raise SemverError(f"improper constraint: {text}")
        self.op, self.orig = m.group(1), m.group(2)
        major, minor, patch, pre = m.group(3), m.group(4) or "", m.group(5) or "", m.group(6) or ""
        self.minor_dirty = self.patch_dirty = self.dirty = False
        ver = self.orig
        if _is_x(major) or major == "":
            ver, self.dirty = f"0.0.0{pre}", True
        elif _is_x(minor.lstrip(".")) or minor == "":
            ver, self.dirty, self.minor_dirty = f"{major}.0.0{pre}", True, True
        elif _is_x(patch.lstrip(".")) or patch == "":
            ver, self.dirty, self.patch_dirty = f"{major}{minor}.0{pre}", True, True
        try:
            self.con = new_version(ver)
        except SemverError:
            raise SemverError("constraint Parser Error") from None

    def check(self, v: Version) -> bool:
        if v.pre and not self.con.pre:
            return False   # prereleases only match constraints that name one
        return _CHECKS[self.op](v, self)


def _is_x(part: str) -> bool:
    return part in ("x", "*", "X")


def _not_equal(v: Version, c: _Constraint) -> bool:
    if c.dirty:
        if c.con.major != v.major:
            return True
        if c.con.minor != v.minor and not c.minor_dirty:
            return True
        if c.minor_dirty:
            return False
        if c.con.patch != v.patch and not c.patch_dirty:
            return True
        if c.patch_dirty:
            if v.pre or c.con.pre:
                return _compare_prerelease(v.pre, c.con.pre) != 0
            return False
    return not v.Equal(c.con)


def _greater(v: Version, c: _Constraint) -> bool:
    if not c.dirty:
        return v.Compare(c.con) == 1
    if v.major != c.con.major:
        return v.major > c.con.major
    if c.minor_dirty:
        return False
    if c.patch_dirty:
        return v.minor > c.con.minor
    return v.Compare(c.con) == 1


def _less_equal(v: Version, c: _Constraint) -> bool:
    if not c.dirty:
        return v.Compare(c.con) <= 0
    if v.major > c.con.major:
        return False
    return not (v.major == c.con.major and v.minor > c.con.minor and not c.minor_dirty)


def _tilde(v: Version, c: _Constraint) -> bool:
    if v.LessThan(c.con):
        return False
    if (c.con.major, c.con.minor, c.con.patch) == (0, 0, 0) and not c.minor_dirty and not c.patch_dirty:
        return True
    if v.major != c.con.major:
        return False
    return not (v.minor != c.con.minor and not c.minor_dirty)


def _tilde_or_equal(v: Version, c: _Constraint) -> bool:
    return _tilde(v, c) if c.dirty else v.Equal(c.con)


def _caret(v: Version, c: _Constraint) -> bool:
    if v.LessThan(c.con):
        return False
    if c.con.major > 0 or c.minor_dirty:
        return v.major == c.con.major
    if v.major > 0:
        return False
    if c.con.minor > 0 or c.patch_dirty:
        return v.minor == c.con.minor
    if v.minor > 0:
        return False
    return c.con.patch == v.patch


_CHECKS: Dict[str, Callable[[Version, _Constraint], bool]] = {
    "": _tilde_or_equal, "=": _tilde_or_equal, "!=": _not_equal, ">": _greater,
    "<": lambda v, c: v.Compare(c.con) < 0, ">=": lambda v, c: v.Compare(c.con) >= 0,
    "=>": lambda v, c: v.Compare(c.con) >= 0, "<=": _less_equal, "=<": _less_equal,
    "~": _tilde, "~>": _tilde, "^": _caret,
}


class Constraints:
    """``semver.Constraints``: ``check(version)`` is true when any ``||`` alternative
    holds completely."""

    __slots__ = ("alternatives",)

    def __init__(self, alternatives: List[List[_Constraint]]) -> None:
        self.alternatives = alternatives

    def check(self, v: Version) -> bool:
        return any(all(c.check(v) for c in group) for group in self.alternatives)


def _rewrite_range(text: str) -> str:
    out = text
    for m in _rx("range").finditer(text):
        out = out.replace(m.group(0), f">= {m.group(1)}, <= {m.group(11)} ", 1)
    return out


def new_constraint(text: Any) -> Constraints:
    """``semver.NewConstraint``; raises ``SemverError`` (``improper constraint: ...``)."""
    if not isinstance(text, str):
        raise SemverError(f"improper constraint: {text}")
    alternatives: List[List[_Constraint]] = []
    for part in _rewrite_range(text).split("||"):
        if not _rx("valid").match(part):
            raise SemverError(f"improper constraint: {part}")
        found: Optional[List[str]] = [m.group(0) for m in _rx("find").finditer(part)] or [part]
        alternatives.append([_Constraint(s) for s in found or ()])
    return Constraints(alternatives)
