"""The generic version comparison of the spec (stability test of a pinned version), pure.

Tokens ``[-.]``, digit runs and other runs; ``-`` sorts before anything, then ``.``;
digit tokens numerically unless either has a leading zero (then as strings); other
tokens case-insensitively; when one token list runs out, the whole strings decide.
"""
from __future__ import annotations

import re

from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import List

_TOKEN = re.compile(r"[-.]|\d+|[^-.\d]+")


def tokens(version: str) -> List[str]:
    return _TOKEN.findall(version)


def _cmp(a: object, b: object) -> int:
    order: int = (a > b) - (a < b)  # type: ignore[operator]
    return order


def compare(a: str, b: str) -> int:
    for x, y in zip(tokens(a), tokens(b)):
        if x == y:
            continue
        for sep in ("-", "."):
            if x == sep:
                return -1
            if y == sep:
                return 1
        if x.isdigit() and y.isdigit():
            if x.startswith("0") or y.startswith("0"):
                rc = _cmp(x.lower(), y.lower())
            else:
                rc = _cmp(int(x), int(y))
        else:
            rc = _cmp(x.lower(), y.lower())
        if rc:
            return rc
    return _cmp(a, b)
