"""Sprig's conversion and encoding functions (docs/conversion.md, encoding.md).

``int``/``int64``/``float64`` are spf13/cast's: numbers truncate, strings parse with Go's
rules (``0x1f``, ``017`` octal, ``1_000``; anything unparsable is 0), booleans are 1 or 0.
``b64dec``/``b32dec`` return Go's error text as the value for bad input, as Sprig does.
"""
from __future__ import annotations

import base64
import binascii

from ccm.gocompat.fmt import go_sprint
from ccm.gocompat.gotypes import Int64
from ccm.gocompat.strconv import atoi, parse_float, parse_int
from ccm.templates.gotmpl.gofunc import Row
from ccm.templates.gotmpl.sprig_strings import wrap64
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Callable

_MIN64 = -(1 << 63)


def _trim_zero_decimal(s: str) -> str:
    found_zero = False
    for i in range(len(s), 0, -1):
        c = s[i - 1]
        if c == ".":
            if found_zero:
                return s[:i - 1]
        elif c == "0":
            found_zero = True
        else:
            return s
    return s


def to_int(v: Any) -> int:
    """``cast.ToInt64``: numbers truncated, strings parsed (``0x1f``, ``017``), bools 1/0,
    anything else 0."""
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, int):
        return wrap64(int(v))
    if isinstance(v, float):
        if v != v or not _MIN64 <= v < 2.0 ** 63:
            return _MIN64   # what amd64 gives for NaN, infinities and out-of-range floats
        return int(v)
    if isinstance(v, str):
        try:
            return parse_int(_trim_zero_decimal(v), 0)
        except ValueError:
            return 0
    return 0


def to_float(v: Any) -> float:
    """``cast.ToFloat64``."""
    if isinstance(v, bool):
        return float(v)
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, str):
        try:
            return parse_float(v)
        except ValueError:
            return 0.0
    return 0.0


def _atoi(s: str) -> int:
    try:
        return atoi(s)
    except ValueError:
        return 0


def _to_decimal(v: Any) -> Int64:
    try:
        return Int64(parse_int(go_sprint(v), 8))
    except ValueError:
        return Int64(0)


# -- encoding -------------------------------------------------------------------------------

def _decode(decoder: Callable[[bytes], bytes], alphabet: str, quantum: int, s: str) -> str:
    """Go's ``DecodeString`` result, or its error text (Sprig returns that as the value)."""
    data = s.replace("\r", "").replace("\n", "")
    try:
        return decoder(data.encode("ascii")).decode("utf-8", "replace")
    except (binascii.Error, ValueError, UnicodeEncodeError):
        pass
    bad = next((i for i, ch in enumerate(data) if ch not in alphabet and ch != "="), None)
    if bad is None:
        pad = data.find("=")
        bad = pad if 0 <= pad < len(data) - len(data) % quantum and pad % quantum < quantum - 2 \
            else len(data) - len(data) % quantum
    return f"illegal base{64 if quantum == 4 else 32} data at input byte {bad}"


_UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
_B64 = _UPPER + _UPPER.lower() + "0123456789+/"
_B32 = _UPPER + "234567"

ROWS = [
    # conversion.md
    Row("atoi", _atoi, "s"),
    Row("int64", lambda v: Int64(to_int(v)), "a"),
    Row("int", to_int, "a"),
    Row("float64", to_float, "a"),
    Row("toDecimal", _to_decimal, "a"),
    # encoding.md
    Row("b64enc", lambda s: base64.b64encode(s.encode("utf-8")).decode("ascii"), "s"),
    Row("b64dec", lambda s: _decode(lambda b: base64.b64decode(b, validate=True), _B64, 4, s), "s"),
    Row("b32enc", lambda s: base64.b32encode(s.encode("utf-8")).decode("ascii"), "s"),
    Row("b32dec", lambda s: _decode(base64.b32decode, _B32, 8, s), "s"),
]
