"""RPM version comparison (``rpmvercmp`` and epoch:version-release), pure.

``rpmvercmp`` follows rpm 4.x (``rpmio/rpmvercmp.c``): separators are anything but
letters, digits, ``~`` and ``^``; ``~`` sorts before everything (even the end),
``^`` after the end but before anything else; alternating digit and letter segments,
digits numeric (leading zeros ignored) and always newer than letters. Tested with the
cases of rpm's own test suite (``tests/rpmvercmp.at``).
"""
from __future__ import annotations

from typing import NamedTuple

from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Optional

_DIGITS = "0123456789"
_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _sign(n: int) -> int:
    return (n > 0) - (n < 0)


# Complexity 26, over the cap of 15 on purpose: a line-for-line port of rpm's rpmvercmp
# (lib/rpmvercmp.c), kept whole so it can be checked against the C.
def rpmvercmp(a: str, b: str) -> int:  # noqa: C901 - ported whole from rpm, see above
    if a == b:
        return 0
    i = j = 0
    la, lb = len(a), len(b)

    def sep(s: str, k: int) -> bool:
        c = s[k]
        return c not in _DIGITS and c not in _LETTERS and c not in "~^"

    while i < la or j < lb:
        while i < la and sep(a, i):
            i += 1
        while j < lb and sep(b, j):
            j += 1
        ca = a[i] if i < la else ""
        cb = b[j] if j < lb else ""
        if ca == "~" or cb == "~":
            if ca != "~":
                return 1
            if cb != "~":
                return -1
            i += 1
            j += 1
            continue
        if ca == "^" or cb == "^":
            if not ca:
                return -1
            if not cb:
                return 1
            if ca != "^":
                return 1
            if cb != "^":
                return -1
            i += 1
            j += 1
            continue
        if not (ca and cb):
            break
        si, sj = i, j
        if ca in _DIGITS:
            isnum = True
            while i < la and a[i] in _DIGITS:
                i += 1
            while j < lb and b[j] in _DIGITS:
                j += 1
        else:
            isnum = False
            while i < la and a[i] in _LETTERS:
                i += 1
            while j < lb and b[j] in _LETTERS:
                j += 1
        seg_a, seg_b = a[si:i], b[sj:j]
        if not seg_a:
            return -1   # cannot happen: ca is alphanumeric
        if not seg_b:
            return 1 if isnum else -1
        if isnum:
            seg_a = seg_a.lstrip("0")
            seg_b = seg_b.lstrip("0")
            if len(seg_a) != len(seg_b):
                return 1 if len(seg_a) > len(seg_b) else -1
        if seg_a != seg_b:
            return 1 if seg_a > seg_b else -1
    if i >= la and j >= lb:
        return 0
    return 1 if i < la else -1


class EVR(NamedTuple):
    epoch: int
    version: str
    release: Optional[str]


def parse_evr(text: str) -> EVR:
    """``[epoch:]version[-release]`` (release after the last ``-``)."""
    epoch = 0
    rest = text
    head, sep, tail = text.partition(":")
    if sep and head.isdigit():
        epoch, rest = int(head), tail
    version, sep, release = rest.rpartition("-")
    if not sep:
        return EVR(epoch, rest, None)
    return EVR(epoch, version, release)


def compare(a: str, b: str) -> int:
    """Compare two ``[epoch:]version[-release]`` strings the way rpm/dnf do; a release
    missing on either side is not compared (``5.8`` matches ``5.8-9.el9``)."""
    ea, eb = parse_evr(a), parse_evr(b)
    if ea.epoch != eb.epoch:
        return _sign(ea.epoch - eb.epoch)
    rc = rpmvercmp(ea.version, eb.version)
    if rc or ea.release is None or eb.release is None:
        return rc
    return rpmvercmp(ea.release, eb.release)
