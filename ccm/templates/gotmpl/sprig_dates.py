"""Sprig's date functions (docs/date.md) on Go times (``ccm.gocompat.time``).

``date``/``dateInZone``/``htmlDate`` take a time or Unix seconds (an ``int``; any other
value means now, as in Sprig) and a Go layout; an unknown zone name falls back to UTC.
``duration`` formats seconds given as a string or an ``int64`` (a plain ``int`` gives
``0s``, as in Sprig); ``durationRound`` reads a duration string, an ``int64`` of
nanoseconds or a time (the time since). ``toDate`` parses in the local zone and gives the
zero time on failure (``mustToDate`` fails instead); ``dateModify`` adds a Go duration and
leaves the time unchanged on a bad one (``mustDateModify`` fails).
"""
from __future__ import annotations


from ccm.gocompat import time as gotime
from ccm.gocompat.duration import HOUR, MINUTE, SECOND, Duration, DurationError, parse_duration
from ccm.gocompat.gotypes import Int64
from ccm.gocompat.strconv import parse_int
from ccm.gocompat.time import GoTime
from ccm.templates.gotmpl.gofunc import Row
from ccm.templates.gotmpl.sprig_strings import wrap64
from ccm.templates.gotmpl.values import FuncError
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any


def _as_time(v: Any) -> GoTime:
    if isinstance(v, GoTime):
        return v
    if isinstance(v, int) and not isinstance(v, bool):
        return GoTime(int(v), 0, gotime.LOCAL)
    return gotime.now()


def _zone(name: str) -> gotime.Location:
    try:
        return gotime.load_location(name)
    except gotime.LocationError:
        return gotime.UTC


def date_in_zone(layout: str, v: Any, zone: str) -> str:
    return _as_time(v).In(_zone(zone)).Format(layout)


def _ago(v: Any) -> str:
    return gotime.now().Sub(_as_time(v)).Round(SECOND).String()


def _duration(v: Any) -> str:
    if isinstance(v, str):
        try:
            n = parse_int(v, 10)
        except ValueError:
            n = 0
    elif isinstance(v, Int64):
        n = int(v)
    else:
        n = 0
    return Duration(wrap64(n * SECOND)).String()


def _duration_round(v: Any) -> str:
    if isinstance(v, str):
        try:
            ns = parse_duration(v).ns
        except DurationError:
            ns = 0
    elif isinstance(v, Int64):
        ns = int(v)
    elif isinstance(v, GoTime):
        ns = gotime.now().Sub(v).ns
    else:
        ns = 0
    u = abs(ns)
    for unit, suffix in ((365 * 24 * HOUR, "y"), (30 * 24 * HOUR, "mo"), (24 * HOUR, "d"), (HOUR, "h"),
                         (MINUTE, "m"), (SECOND, "s")):
        if u > unit:
            return f"{u // unit}{suffix}"
    return "0s"


def _date_modify(change: str, t: GoTime) -> GoTime:
    try:
        return t.Add(parse_duration(change))
    except DurationError as err:
        raise FuncError(str(err)) from None


def _to_date(layout: str, text: str) -> GoTime:
    from ccm.gocompat.timeparse import ParseError

    try:
        return gotime.parse_in_location(layout, text, gotime.LOCAL)
    except ParseError as err:
        raise FuncError(str(err)) from None


ROWS = [
    Row("now", gotime.now, ""),
    Row("ago", _ago, "a"),
    Row("date", lambda layout, v: date_in_zone(layout, v, "Local"), "sa"),
    Row("dateInZone", date_in_zone, "sas", aliases=("date_in_zone",)),
    Row("dateModify", _date_modify, "st", must="mustDateModify", lenient=lambda err, args: args[1],
        aliases=("date_modify",)),
    Row("must_date_modify", _date_modify, "st"),
    Row("duration", _duration, "a"),
    Row("durationRound", _duration_round, "a"),
    Row("htmlDate", lambda v: date_in_zone("2006-01-02", v, "Local"), "a"),
    Row("htmlDateInZone", lambda v, zone: date_in_zone("2006-01-02", v, zone), "as"),
    Row("toDate", _to_date, "ss", must="mustToDate", lenient=lambda err, args: GoTime()),
    Row("unixEpoch", lambda t: str(t.Unix()), "t"),
]
