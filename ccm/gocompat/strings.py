"""Go's ``strings.SplitN`` and ``strings.SplitAfterN`` (``n < 0``: all pieces, ``n == 0``:
none, an empty separator splits after each character). Standard library only."""
from __future__ import annotations
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import List


__all__ = ["split_n", "split_after_n"]


def _chars(s: str, n: int) -> List[str]:
    chars = list(s)
    if 0 < n < len(chars):
        chars = chars[:n - 1] + ["".join(chars[n - 1:])]
    return chars


def split_n(s: str, sep: str, n: int = -1) -> List[str]:
    if n == 0:
        return []
    if sep == "":
        return _chars(s, n)
    return s.split(sep) if n < 0 else s.split(sep, n - 1)


def split_after_n(s: str, sep: str, n: int = -1) -> List[str]:
    """Like ``split_n``, each piece keeping its separator."""
    if n == 0:
        return []
    if sep == "":
        return _chars(s, n)
    out: List[str] = []
    start = 0
    while n < 0 or len(out) < n - 1:
        i = s.find(sep, start)
        if i < 0:
            break
        out.append(s[start:i + len(sep)])
        start = i + len(sep)
    out.append(s[start:])
    return out
