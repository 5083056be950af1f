"""Durations: the fisk input syntax users type, and Go's ``time.Duration.String()``.

Pure functions; both directions are needed for wire compatibility with upstream
(event YAML, log lines, ``Nats-TTL`` headers).
"""
from __future__ import annotations

from ccm.typing_guard import TYPE_CHECKING
if TYPE_CHECKING:
    import re
    from typing import List, Optional, Union

_UNITS_NS = {
    "ns": 1,
    "us": 1_000,
    "µs": 1_000,
    "μs": 1_000,
    "ms": 1_000_000,
    "s": 1_000_000_000,
    "m": 60 * 1_000_000_000,
    "h": 3600 * 1_000_000_000,
    "d": 24 * 3600 * 1_000_000_000,
    "w": 7 * 24 * 3600 * 1_000_000_000,
    "M": 30 * 24 * 3600 * 1_000_000_000,
    "y": 365 * 24 * 3600 * 1_000_000_000,
}
_PART: List["re.Pattern[str]"] = []   # compiled on first use: not every run parses a duration


def _part() -> "re.Pattern[str]":
    if not _PART:
        import re

        _PART.append(re.compile(r"([0-9]*\.?[0-9]+)(ns|us|µs|μs|ms|s|m|h|d|w|M|y)"))
    return _PART[0]


class DurationError(ValueError):
    pass


def parse_duration_ns(text: Union[str, int, float]) -> int:
    """Parse a fisk duration (``1m30s``, ``1.5h``, ``2d``, ``1w``) into nanoseconds.

    A bare number is taken as seconds (fisk accepts plain integers as seconds).
    """
    if isinstance(text, bool):
        raise DurationError(f"invalid duration {text!r}")
    if isinstance(text, (int, float)):
        return int(text * 1_000_000_000)
    s = str(text).strip()
    if not s:
        raise DurationError("invalid duration \"\"")
    sign = 1
    if s[0] in "+-":
        sign = -1 if s[0] == "-" else 1
        s = s[1:]
    if s == "0":
        return 0
    if s.isascii() and s.isdigit():   # [0-9]+
        return sign * int(s) * 1_000_000_000
    pos = 0
    total = 0.0
    part = _part()
    while pos < len(s):
        m = part.match(s, pos)
        if not m:
            raise DurationError(f"invalid duration \"{text}\"")
        total += float(m.group(1)) * _UNITS_NS[m.group(2)]
        pos = m.end()
    return sign * int(round(total))


# poll()/select() take milliseconds in a C int: the longest wait the platform supports.
MAX_WAIT_SECONDS = (2 ** 31 - 1) / 1000


def clamp_timeout(seconds: Optional[float]) -> Optional[float]:
    """``seconds`` clamped to the longest wait the platform supports (``1y`` waits ~24.8 days)."""
    if seconds is None:
        return None
    return min(float(seconds), MAX_WAIT_SECONDS)


def parse_duration(text: Union[str, int, float]) -> float:
    """Parse a fisk duration into seconds (float)."""
    return parse_duration_ns(text) / 1_000_000_000


def _frac(value: int, digits: int) -> str:
    """``value`` scaled by 10**-digits, trailing zeros trimmed (Go's fmtFrac)."""
    whole, frac = divmod(value, 10 ** digits)
    if frac == 0:
        return str(whole)
    return f"{whole}.{str(frac).rjust(digits, '0').rstrip('0')}"


def go_duration(ns: Union[int, float]) -> str:
    """Format nanoseconds exactly as Go's ``time.Duration.String()``."""
    ns = int(ns)
    if ns == 0:
        return "0s"
    neg = ns < 0
    u = -ns if neg else ns
    if u < 1_000:
        out = f"{u}ns"
    elif u < 1_000_000:
        out = _frac(u, 3) + "µs"
    elif u < 1_000_000_000:
        out = _frac(u, 6) + "ms"
    else:
        hours, rem = divmod(u, 3600 * 1_000_000_000)
        minutes, rem = divmod(rem, 60 * 1_000_000_000)
        out = _frac(rem, 9) + "s"
        if hours:
            out = f"{hours}h{minutes}m" + out
        elif minutes:
            out = f"{minutes}m" + out
    return "-" + out if neg else out


def go_duration_seconds(seconds: float) -> str:
    return go_duration(int(round(seconds * 1_000_000_000)))


def round_ms(ns: int) -> int:
    """Round nanoseconds to whole milliseconds (Go ``Round(time.Millisecond)``)."""
    return int((ns + 500_000) // 1_000_000 * 1_000_000) if ns >= 0 else -round_ms(-ns)


def truncate_ms(ns: int) -> int:
    return int(ns // 1_000_000 * 1_000_000) if ns >= 0 else -truncate_ms(-ns)
