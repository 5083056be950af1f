"""expr-lang's date builtins: ``now``, ``duration``, ``date``, ``timezone``, and the time
arithmetic of its operators.

Values are Go's (``ccm.gocompat.time``/``duration``): ``duration("1h30m")`` is a
``time.Duration`` printing ``1h30m0s``; ``date(s)`` reads ``2006-01-02``, ``15:04:05``,
``2006-01-02 15:04:05``, RFC 3339, RFC 822, RFC 850 or RFC 1123 (as UTC), or ``s`` in
the given layout and zone; ``timezone(name)`` is a ``*time.Location``. As in expr-lang a
time minus a time is a duration, a time plus or minus a duration is a time, durations add,
subtract and multiply by numbers, and times and durations compare with their own kind.
A duration beyond int64 nanoseconds (about 292 years) is an error, not a wrapped value.
"""
from __future__ import annotations


from ccm.expr.errors import ExprError
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Optional
    from ccm.gocompat.duration import Duration
    from ccm.gocompat.time import GoTime, Location

# Go's time machinery is imported by the first date function an expression calls: most
# runs use none, and their start-up should not pay for it.

_LAYOUTS = ("2006-01-02", "15:04:05", "2006-01-02 15:04:05", "2006-01-02T15:04:05Z07:00",
            "02 Jan 06 15:04 MST", "Monday, 02-Jan-06 15:04:05 MST", "Mon, 02 Jan 2006 15:04:05 MST")


def _str(fn: str, value: Any) -> str:
    if not isinstance(value, str):
        from ccm.expr.runtime import type_name
        raise ExprError(f"cannot use {type_name(value)} as argument (type string) to call {fn}")
    return value


def b_now(tz: Any = None) -> "GoTime":
    """``now()`` (local time) or ``now(timezone(...))``."""
    from ccm.gocompat import time as gotime

    t = gotime.now()
    if tz is None:
        return t
    if not isinstance(tz, gotime.Location):
        raise ExprError("invalid number of arguments (expected 0, got 1)")
    return t.In(tz)


def b_duration(text: Any) -> "Duration":
    from ccm.gocompat.duration import DurationError, parse_duration

    try:
        return parse_duration(_str("duration", text))
    except DurationError as err:
        raise ExprError(str(err)) from None


def b_timezone(name: Any) -> "Location":
    from ccm.gocompat import time as gotime

    try:
        return gotime.load_location(_str("timezone", name))
    except gotime.LocationError as err:
        raise ExprError(str(err)) from None


def b_date(*args: Any) -> "GoTime":
    """``date(s)``, ``date(s, layout)``, ``date(s, layout, zone)``; a leading location
    argument (``date(timezone("UTC"), s)``) parses in that location."""
    from ccm.gocompat import time as gotime
    from ccm.gocompat.timeparse import ParseError

    tz: Optional["Location"] = None
    if args and isinstance(args[0], gotime.Location):
        tz, args = args[0], args[1:]
    if not 1 <= len(args) <= 3:
        raise ExprError(f"invalid number of arguments (expected at most 3, got {len(args)})")
    text = _str("date", args[0])
    try:
        if len(args) == 2:
            layout = _str("date", args[1])
            return gotime.parse_in_location(layout, text, tz) if tz else gotime.parse(layout, text)
        if len(args) == 3:
            return gotime.parse_in_location(_str("date", args[1]), text, b_timezone(args[2]))
    except ParseError as err:
        raise ExprError(str(err)) from None
    for layout in _LAYOUTS:
        try:
            return gotime.parse_in_location(layout, text, tz) if tz else gotime.parse(layout, text)
        except ParseError:
            continue
    raise ExprError(f"invalid date {text}")


# -- operators (called by ccm.expr.runtime for operands that are not plain numbers) -------

def _duration(ns: int) -> "Duration":
    from ccm.gocompat.duration import Duration

    try:
        return Duration(ns)
    except OverflowError:
        from ccm.expr.limits import LimitError
        raise LimitError("duration overflows int64 nanoseconds (about 292 years)") from None


def add(a: Any, b: Any) -> Any:
    """``time + duration``, ``duration + time``, ``duration + duration``; else None."""
    from ccm.gocompat.duration import Duration
    from ccm.gocompat.time import GoTime

    if isinstance(a, GoTime) and isinstance(b, Duration):
        return a.Add(b)
    if isinstance(a, Duration) and isinstance(b, GoTime):
        return b.Add(a)
    if isinstance(a, Duration) and isinstance(b, Duration):
        return _duration(a.ns + b.ns)
    return None


def sub(a: Any, b: Any) -> Any:
    from ccm.gocompat.duration import Duration
    from ccm.gocompat.time import GoTime

    if isinstance(a, GoTime) and isinstance(b, GoTime):
        return a.Sub(b)
    if isinstance(a, GoTime) and isinstance(b, Duration):
        return a.Add(Duration(-b.ns) if b.ns != -(1 << 63) else _duration(-b.ns))
    if isinstance(a, Duration) and isinstance(b, Duration):
        return _duration(a.ns - b.ns)
    return None


def mul(a: Any, b: Any) -> Any:
    """A duration times an integer is a duration, times a float a float (as in expr-lang)."""
    from ccm.gocompat.duration import Duration

    for d, n in ((a, b), (b, a)):
        if isinstance(d, Duration):
            if isinstance(n, Duration):
                return _duration(d.ns * n.ns)
            if isinstance(n, bool):
                return None
            if isinstance(n, int):
                return _duration(d.ns * n)
            if isinstance(n, float):
                return float(d.ns) * n
    return None

