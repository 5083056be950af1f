"""Go's ``time.Duration``: an int64 count of nanoseconds, parsed and printed as Go does.

``parse_duration`` is ``time.ParseDuration`` (``"1h30m"``, ``"-1.5h"``, ``"300ms"``, ``"0"``;
units ``ns us µs μs ms s m h``) with Go's error texts; ``Duration`` prints as
``Duration.String()`` (``1h30m0s``, ``1.5s``, ``2ms``, ``0s``) and has Go's methods
(``Hours()`` ... ``Round(m)``, ``Truncate(m)``, ``Abs()``). Arithmetic that leaves the
int64 range is an error (``OverflowError``), never a silently huge number.

Not: fisk's day/week units (that is ``ccm.model.durations``). Standard library only.
"""
from __future__ import annotations


from ccm.gocompat.gotypes import GoValue
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, List, Tuple

__all__ = ["Duration", "DurationError", "parse_duration", "NANOSECOND", "MICROSECOND",
           "MILLISECOND", "SECOND", "MINUTE", "HOUR", "MAX_NS", "MIN_NS"]

NANOSECOND = 1
MICROSECOND = 1000
MILLISECOND = 1000 * MICROSECOND
SECOND = 1000 * MILLISECOND
MINUTE = 60 * SECOND
HOUR = 60 * MINUTE
MAX_NS = (1 << 63) - 1
MIN_NS = -(1 << 63)

_UNITS = {"ns": NANOSECOND, "us": MICROSECOND, "\u00b5s": MICROSECOND, "\u03bcs": MICROSECOND,
          "ms": MILLISECOND, "s": SECOND, "m": MINUTE, "h": HOUR}


class DurationError(ValueError):
    """A duration string Go's ``time.ParseDuration`` rejects; the message is Go's."""


def _quote(s: str) -> str:
    # time's own quote(): non-ASCII and control bytes as \xNN, '"' and '\\' escaped
    out = ['"']
    for ch in s:
        if ord(ch) < 0x20 or ord(ch) >= 0x80:
            out.extend(f"\\x{b:02x}" for b in ch.encode("utf-8"))
        else:
            out.append("\\" + ch if ch in '"\\' else ch)
    out.append('"')
    return "".join(out)


def checked(ns: int) -> int:
    """``ns`` if it fits Go's int64, else ``OverflowError``."""
    if ns > MAX_NS or ns < MIN_NS:
        raise OverflowError("duration overflows int64 nanoseconds (about 292 years)")
    return ns


class Duration(GoValue):
    """A Go ``time.Duration``; compares and hashes by its nanoseconds."""

    __slots__ = ("ns",)
    GO_TYPE = "time.Duration"
    GO_KIND = "int64"

    def __init__(self, ns: int) -> None:
        self.ns = checked(int(ns))

    # -- Go methods (names are Go's API)
    def Nanoseconds(self) -> int:  # noqa: N802
        return self.ns

    def Microseconds(self) -> int:  # noqa: N802
        return int(self.ns / MICROSECOND)

    def Milliseconds(self) -> int:  # noqa: N802
        return int(self.ns / MILLISECOND)

    def Seconds(self) -> float:  # noqa: N802
        sec, nsec = divmod(abs(self.ns), SECOND)
        value = sec + nsec / 1e9
        return -value if self.ns < 0 else value

    def Minutes(self) -> float:  # noqa: N802
        minute, nsec = divmod(abs(self.ns), MINUTE)
        value = minute + nsec / (60 * 1e9)
        return -value if self.ns < 0 else value

    def Hours(self) -> float:  # noqa: N802
        hour, nsec = divmod(abs(self.ns), HOUR)
        value = hour + nsec / (60 * 60 * 1e9)
        return -value if self.ns < 0 else value

    def Abs(self) -> "Duration":  # noqa: N802
        return Duration(MAX_NS if self.ns == MIN_NS else abs(self.ns))

    def Truncate(self, m: Any) -> "Duration":  # noqa: N802
        m = _ns(m)
        if m <= 0:
            return self
        return Duration(self.ns - _rem(self.ns, m))

    def Round(self, m: Any) -> "Duration":  # noqa: N802
        """Go's ``Duration.Round``: halfway values round away from zero; saturates."""
        m = _ns(m)
        if m <= 0:
            return self
        d = self.ns
        r = _rem(d, m)
        if d < 0:
            r = -r
            if r + r < m:
                return Duration(d + r)
            d1 = d - m + r
            return Duration(d1 if d1 >= MIN_NS else MIN_NS)
        if r + r < m:
            return Duration(d - r)
        d1 = d + m - r
        return Duration(d1 if d1 <= MAX_NS else MAX_NS)

    def String(self) -> str:  # noqa: N802
        return _format(self.ns)

    def json_value(self) -> int:
        return self.ns

    # -- Python protocol
    def __str__(self) -> str:
        return _format(self.ns)

    def __repr__(self) -> str:
        return f"Duration({_format(self.ns)})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Duration) and other.ns == self.ns

    def __hash__(self) -> int:
        return hash(("duration", self.ns))

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, Duration):
            return NotImplemented
        return self.ns < other.ns

    def __le__(self, other: object) -> bool:
        if not isinstance(other, Duration):
            return NotImplemented
        return self.ns <= other.ns

    def __gt__(self, other: object) -> bool:
        if not isinstance(other, Duration):
            return NotImplemented
        return self.ns > other.ns

    def __ge__(self, other: object) -> bool:
        if not isinstance(other, Duration):
            return NotImplemented
        return self.ns >= other.ns


def _ns(m: Any) -> int:
    return m.ns if isinstance(m, Duration) else int(m)


def _rem(a: int, b: int) -> int:
    """Go's ``%``: the remainder takes the dividend's sign."""
    r = abs(a) % abs(b)
    return -r if a < 0 else r


def _frac(value: int, prec: int, out: List[str]) -> int:
    """Prepend ``.ddd`` (trailing zeros dropped) of ``value / 10**prec``; return the quotient."""
    digits = []
    printed = False
    for _ in range(prec):
        digit = value % 10
        printed = printed or digit != 0
        if printed:
            digits.append(str(digit))
        value //= 10
    if printed:
        out.append("." + "".join(reversed(digits)))
    return value


def _format(ns: int) -> str:
    u = abs(ns)
    sign = "-" if ns < 0 else ""
    if u < SECOND:
        if u == 0:
            return "0s"
        if u < MICROSECOND:
            return f"{sign}{u}ns"
        prec, unit = (3, "\u00b5s") if u < MILLISECOND else (6, "ms")
        frac: List[str] = []
        whole = _frac(u, prec, frac)
        return f"{sign}{whole}{''.join(frac)}{unit}"
    frac = []
    seconds = _frac(u, 9, frac)
    text = f"{seconds % 60}{''.join(frac)}s"
    minutes = seconds // 60
    if minutes:
        text = f"{minutes % 60}m{text}"
        hours = minutes // 60
        if hours:
            text = f"{hours}h{text}"
    return sign + text


def _leading_int(s: str) -> Tuple[int, str, bool]:
    i = 0
    while i < len(s) and "0" <= s[i] <= "9":
        i += 1
    if i == 0:
        return 0, s, True
    value = int(s[:i])
    return value, s[i:], value <= 1 << 63


def _leading_fraction(s: str) -> Tuple[int, float, str, bool]:
    i = 0
    while i < len(s) and "0" <= s[i] <= "9":
        i += 1
    digits = s[:i][:18]    # Go stops accumulating precision before overflowing uint64
    return (int(digits) if digits else 0), 10.0 ** len(digits), s[i:], i > 0


def _component(s: str, invalid: DurationError, orig: str) -> Tuple[int, str]:
    """(nanoseconds, rest) of the leading ``[0-9]*(\\.[0-9]*)?unit`` of ``s``."""
    if not (s[0] == "." or "0" <= s[0] <= "9"):
        raise invalid
    before = len(s)
    whole, s, ok = _leading_int(s)
    if not ok:
        raise invalid
    pre = len(s) != before
    frac, scale, post = 0, 1.0, False
    if s[:1] == ".":
        frac, scale, s, post = _leading_fraction(s[1:])
    if not pre and not post:
        raise invalid
    i = 0
    while i < len(s) and not (s[i] == "." or "0" <= s[i] <= "9"):
        i += 1
    if i == 0:
        raise DurationError("time: missing unit in duration " + _quote(orig))
    unit = _UNITS.get(s[:i])
    if unit is None:
        raise DurationError(f"time: unknown unit {_quote(s[:i])} in duration {_quote(orig)}")
    if whole > (1 << 63) // unit:
        raise invalid
    value = whole * unit
    if frac:
        value += int(float(frac) * (float(unit) / scale))
    return value, s[i:]


def parse_duration(text: str) -> Duration:
    """Go's ``time.ParseDuration``; raises ``DurationError`` with Go's message."""
    if not isinstance(text, str):
        raise DurationError(f"time: invalid duration {text!r}")
    s = text
    neg = False
    if s[:1] in ("-", "+"):
        neg, s = s[0] == "-", s[1:]
    if s == "0":
        return Duration(0)
    invalid = DurationError("time: invalid duration " + _quote(text))
    if s == "":
        raise invalid
    total = 0
    while s:
        value, s = _component(s, invalid, text)
        total += value
        if total > 1 << 63:
            raise invalid
    if neg:
        return Duration(-total)
    if total > MAX_NS:
        raise invalid
    return Duration(total)
