"""Go's ``time.Time`` and ``*time.Location`` for templates and expressions.

``GoTime`` is an instant (Unix seconds + nanoseconds) seen in a ``Location``; it prints as
Go's ``Time.String()`` (without the monotonic ``m=+...`` suffix), formats Go layouts
(``Format("2006-01-02")``), compares by instant and has Go's methods (``Year()``,
``Month()`` (prints ``January``), ``Weekday()``, ``Unix()``, ``In(loc)``, ``Add(d)``,
``Sub(t)``, ``AddDate(y, m, d)``, ``Truncate``/``Round`` ...). ``now()``, ``load_location``
(``time.LoadLocation``: ``""``/``UTC``, ``Local``, IANA names from the system zoneinfo),
``parse``/``parse_in_location`` (``time.Parse``) and ``date`` (``time.Date``) build them.
Years outside 1..9999 work (Go's zero time is year 1; ``Parse("15:04", ...)`` is year 0).

Not: the monotonic clock, leap seconds, ``Zone()``/``Date()``/``Clock()`` (several results).
Standard library only.
"""
from __future__ import annotations

import datetime
import time as _time

from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Dict, Optional, Tuple

from ccm.gocompat import timefmt
from ccm.gocompat.duration import SECOND, Duration
from ccm.gocompat.gotypes import GoValue

__all__ = ["GoTime", "Location", "LocationError", "Month", "Weekday", "UTC", "LOCAL", "now",
           "load_location", "parse", "parse_in_location", "date", "fixed_zone", "RFC3339", "RFC3339_NANO"]

RFC3339 = "2006-01-02T15:04:05Z07:00"
RFC3339_NANO = "2006-01-02T15:04:05.999999999Z07:00"
_STRING_LAYOUT = "2006-01-02 15:04:05.999999999 -0700 MST"
# datetime's range, kept a day away from its edges for zone look-ups
_MIN_LOOKUP, _MAX_LOOKUP = -62135596800 + 86400, 253402300799 - 86400


class LocationError(ValueError):
    """``time.LoadLocation`` failed; the message is Go's (``unknown time zone X``)."""


class Month(int, GoValue):
    """Go's ``time.Month``: an integer (January = 1) that prints its English name."""

    __slots__ = ()
    GO_TYPE = "time.Month"
    GO_KIND = "int"

    def String(self) -> str:  # noqa: N802 - Go method names are the API
        return timefmt.LONG_MONTHS[self - 1] if 1 <= self <= 12 else f"%!Month({int(self)})"

    __str__ = String


class Weekday(int, GoValue):
    """Go's ``time.Weekday``: an integer (Sunday = 0) that prints its English name."""

    __slots__ = ()
    GO_TYPE = "time.Weekday"
    GO_KIND = "int"

    def String(self) -> str:  # noqa: N802
        return timefmt.LONG_DAYS[self] if 0 <= self <= 6 else f"%!Weekday({int(self)})"

    __str__ = String


class Location(GoValue):
    """A Go ``*time.Location``: UTC, Local (the host's zone), an IANA zone or a fixed offset."""

    __slots__ = ("name", "_tz", "_offset")
    GO_TYPE = "*time.Location"
    GO_KIND = "ptr"

    def __init__(self, name: str, tz: Any = None, offset: Optional[int] = None) -> None:
        self.name = name
        self._tz = tz          # a zoneinfo.ZoneInfo, or None
        self._offset = offset  # fixed zones (and UTC): seconds east

    def lookup(self, unix: int) -> Tuple[str, int]:
        """(abbreviation, offset seconds) in effect at the Unix second ``unix``."""
        if self._offset is not None:
            return (self.name if self is not UTC else "UTC"), self._offset
        unix = min(max(unix, _MIN_LOOKUP), _MAX_LOOKUP)
        if self._tz is None:   # Local: the C library knows the host's rules and TZ
            try:
                tm = _time.localtime(unix)
            except (OverflowError, OSError, ValueError):
                return "UTC", 0
            return tm.tm_zone or "", tm.tm_gmtoff or 0
        dt = datetime.datetime.fromtimestamp(unix, self._tz)
        offset = dt.utcoffset() or datetime.timedelta(0)
        return dt.tzname() or "", int(offset.total_seconds())

    def lookup_name(self, abbrev: str, unix: int) -> Optional[int]:
        """The offset of the zone called ``abbrev`` in this location around ``unix``."""
        for probe in (unix, unix - 182 * 86400, unix + 182 * 86400):
            name, offset = self.lookup(probe)
            if name == abbrev:
                return offset
        return None

    def String(self) -> str:  # noqa: N802
        return self.name

    def json_value(self) -> Dict[str, Any]:
        return {}   # a *time.Location has no exported fields

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"Location({self.name!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Location) and (other is self or (
            other.name == self.name and other._offset == self._offset and other._tz == self._tz))

    def __hash__(self) -> int:
        return hash(self.name)


UTC = Location("UTC", offset=0)
LOCAL = Location("Local")


def fixed_zone(name: str, offset: int) -> Location:
    return Location(name, offset=offset)


def load_location(name: Any) -> Location:
    """Go's ``time.LoadLocation``."""
    if not isinstance(name, str):
        raise LocationError(f"unknown time zone {name}")
    if name in ("", "UTC"):
        return UTC
    if name == "Local":
        return LOCAL
    try:
        import zoneinfo   # only dates with a zone name need it
        tz = zoneinfo.ZoneInfo(name)
    except Exception:   # ZoneInfoNotFoundError, ValueError for bad keys, missing tzdata
        raise LocationError(f"unknown time zone {name}") from None
    return Location(name, tz=tz)


_ZERO_SEC = timefmt.days_from_civil(1, 1, 1) * 86400   # Go's zero Time: 0001-01-01 UTC


class GoTime(GoValue):
    """A Go ``time.Time``; ``GoTime()`` is Go's zero time."""

    __slots__ = ("sec", "nsec", "loc")
    GO_TYPE = "time.Time"
    GO_KIND = "struct"

    def __init__(self, sec: int = _ZERO_SEC, nsec: int = 0, loc: Optional[Location] = None) -> None:
        extra, self.nsec = divmod(int(nsec), SECOND)
        self.sec = int(sec) + extra
        self.loc = UTC if loc is None else loc

    @classmethod
    def from_datetime(cls, dt: datetime.datetime) -> "GoTime":
        """An aware ``datetime`` as a GoTime in a fixed zone of its offset and name."""
        offset = dt.utcoffset() or datetime.timedelta(0)
        seconds = int(offset.total_seconds())
        loc = UTC if seconds == 0 and dt.tzname() in ("UTC", None) else fixed_zone(dt.tzname() or "", seconds)
        epoch = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
        delta = dt - epoch
        return cls(delta.days * 86400 + delta.seconds, delta.microseconds * 1000, loc)

    # -- civil fields
    def _fields(self) -> timefmt.Fields:
        zone, offset = self.loc.lookup(self.sec)
        return timefmt.fields_of(self.sec + offset, self.nsec, offset, zone)

    def Year(self) -> int:  # noqa: N802 - Go method names are the API
        return self._fields().year

    def Month(self) -> Month:  # noqa: N802
        return Month(self._fields().month)

    def Day(self) -> int:  # noqa: N802
        return self._fields().day

    def Hour(self) -> int:  # noqa: N802
        return self._fields().hour

    def Minute(self) -> int:  # noqa: N802
        return self._fields().minute

    def Second(self) -> int:  # noqa: N802
        return self._fields().second

    def Nanosecond(self) -> int:  # noqa: N802
        return self.nsec

    def Weekday(self) -> Weekday:  # noqa: N802
        return Weekday(self._fields().weekday)

    def YearDay(self) -> int:  # noqa: N802
        return self._fields().yday

    def Unix(self) -> int:  # noqa: N802
        return self.sec

    def UnixMilli(self) -> int:  # noqa: N802
        return self.sec * 1000 + self.nsec // 1_000_000

    def UnixMicro(self) -> int:  # noqa: N802
        return self.sec * 1_000_000 + self.nsec // 1000

    def UnixNano(self) -> int:  # noqa: N802
        return self.sec * SECOND + self.nsec

    def IsZero(self) -> bool:  # noqa: N802
        return self.sec == _ZERO_SEC and self.nsec == 0

    # -- zones
    def UTC(self) -> "GoTime":  # noqa: N802
        return GoTime(self.sec, self.nsec, UTC)

    def Local(self) -> "GoTime":  # noqa: N802
        return GoTime(self.sec, self.nsec, LOCAL)

    def In(self, loc: Any) -> "GoTime":  # noqa: N802
        if not isinstance(loc, Location):
            raise ValueError("time: missing Location in call to Time.In")
        return GoTime(self.sec, self.nsec, loc)

    def Location(self) -> Location:  # noqa: N802
        return self.loc

    # -- arithmetic
    def Add(self, d: Any) -> "GoTime":  # noqa: N802
        ns = d.ns if isinstance(d, Duration) else int(d)
        return GoTime(self.sec, self.nsec + ns, self.loc)

    def Sub(self, other: "GoTime") -> Duration:  # noqa: N802
        """``t - u`` as a Duration, saturated at the int64 range as Go does."""
        ns = (self.sec - other.sec) * SECOND + (self.nsec - other.nsec)
        return Duration(min(max(ns, -(1 << 63)), (1 << 63) - 1))

    def AddDate(self, years: int, months: int, days: int) -> "GoTime":  # noqa: N802
        f = self._fields()
        return date(f.year + years, f.month + months, f.day + days, f.hour, f.minute, f.second,
                    self.nsec, self.loc)

    def Truncate(self, d: Any) -> "GoTime":  # noqa: N802
        ns = d.ns if isinstance(d, Duration) else int(d)
        if ns <= 0:
            return self
        total = self.UnixNano() - _ZERO_SEC * SECOND
        return GoTime(_ZERO_SEC, total - total % ns, self.loc)

    def Round(self, d: Any) -> "GoTime":  # noqa: N802
        ns = d.ns if isinstance(d, Duration) else int(d)
        if ns <= 0:
            return self
        total = self.UnixNano() - _ZERO_SEC * SECOND
        r = total % ns
        base = total - r + (ns if r + r >= ns else 0)
        return GoTime(_ZERO_SEC, base, self.loc)

    def Before(self, other: "GoTime") -> bool:  # noqa: N802
        return (self.sec, self.nsec) < (other.sec, other.nsec)

    def After(self, other: "GoTime") -> bool:  # noqa: N802
        return (self.sec, self.nsec) > (other.sec, other.nsec)

    def Equal(self, other: "GoTime") -> bool:  # noqa: N802
        return (self.sec, self.nsec) == (other.sec, other.nsec)

    def Compare(self, other: "GoTime") -> int:  # noqa: N802
        a, b = (self.sec, self.nsec), (other.sec, other.nsec)
        return (a > b) - (a < b)

    # -- text
    def Format(self, layout: Any) -> str:  # noqa: N802
        return timefmt.format_fields(str(layout), self._fields())

    def String(self) -> str:  # noqa: N802
        return self.Format(_STRING_LAYOUT)

    def rfc3339(self) -> str:
        """The text Go's ``json.Marshal`` writes for a time (RFC 3339 with nanoseconds)."""
        return self.Format(RFC3339_NANO)

    def json_value(self) -> str:
        if not 0 <= self.Year() <= 9999:
            raise ValueError("json: error calling MarshalJSON for type time.Time: "
                             "Time.MarshalJSON: year outside of range [0,9999]")
        return self.rfc3339()

    @property
    def dt(self) -> datetime.datetime:
        """This instant as an aware ``datetime`` (microseconds; years 1..9999 only)."""
        zone, offset = self.loc.lookup(self.sec)
        delta = datetime.timedelta(seconds=offset)
        tz = datetime.timezone(delta, zone) if zone else datetime.timezone(delta)
        epoch = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
        return (epoch + datetime.timedelta(seconds=self.sec, microseconds=self.nsec // 1000)).astimezone(tz)

    def __str__(self) -> str:
        return self.String()

    def __repr__(self) -> str:
        return f"GoTime({self.String()})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, GoTime) and (self.sec, self.nsec) == (other.sec, other.nsec)

    def __hash__(self) -> int:
        return hash((self.sec, self.nsec))

    def __lt__(self, other: object) -> bool:
        return self.Before(other) if isinstance(other, GoTime) else NotImplemented

    def __le__(self, other: object) -> bool:
        return not self.After(other) if isinstance(other, GoTime) else NotImplemented

    def __gt__(self, other: object) -> bool:
        return self.After(other) if isinstance(other, GoTime) else NotImplemented

    def __ge__(self, other: object) -> bool:
        return not self.Before(other) if isinstance(other, GoTime) else NotImplemented


def now() -> GoTime:
    """``time.Now()`` in the Local location."""
    ns = _time.time_ns()
    return GoTime(ns // SECOND, ns % SECOND, LOCAL)


def _to_unix(local_seconds: int, loc: Location) -> int:
    """The instant whose wall clock in ``loc`` reads ``local_seconds`` (Go's Date rule)."""
    _, offset = loc.lookup(local_seconds)
    if offset:
        utc = local_seconds - offset
        _, again = loc.lookup(utc)
        if again != offset:
            offset = again
    return local_seconds - offset


def date(year: int, month: int, day: int, hour: int, minute: int, sec: int, nsec: int,
         loc: Location) -> GoTime:
    """Go's ``time.Date``: out-of-range fields carry over (month 13 is next January)."""
    y_carry, m0 = divmod(month - 1, 12)
    days = timefmt.days_from_civil(year + y_carry, m0 + 1, 1) + day - 1
    local = days * 86400 + hour * 3600 + minute * 60 + sec
    extra, nsec = divmod(nsec, SECOND)
    return GoTime(_to_unix(local + extra, loc), nsec, loc)


def parse_in_location(layout: str, value: str, loc: Location) -> GoTime:
    """Go's ``time.ParseInLocation`` (``parse(..., loc, loc)``)."""
    return parse(layout, value, loc, loc)


def parse(layout: str, value: str, default: Location = UTC, local: Location = LOCAL) -> GoTime:
    """Go's ``time.Parse``: no zone in the text means ``default``; a zone offset or name
    that ``local`` uses is taken as ``local``, any other becomes a fixed zone."""
    from ccm.gocompat.timeparse import parse_fields   # only parsing needs it

    p = parse_fields(layout, value)
    if p.utc:
        return date(p.year, p.month, p.day, p.hour, p.minute, p.second, p.nsec, UTC)
    if p.offset is not None:
        t = date(p.year, p.month, p.day, p.hour, p.minute, p.second, p.nsec, UTC)
        unix = t.sec - p.offset
        name, offset = local.lookup(unix)
        if offset == p.offset and (not p.zone or name == p.zone):
            return GoTime(unix, p.nsec, local)
        return GoTime(unix, p.nsec, fixed_zone(p.zone, p.offset))
    if p.zone:
        t = date(p.year, p.month, p.day, p.hour, p.minute, p.second, p.nsec, UTC)
        found = local.lookup_name(p.zone, t.sec)
        if found is not None:
            return GoTime(t.sec - found, p.nsec, local)
        # Go keeps the clock reading as UTC and only labels it with the unknown zone
        offset = int(p.zone[3:]) * 3600 if len(p.zone) > 3 and p.zone.startswith("GMT") else 0
        return GoTime(t.sec, p.nsec, fixed_zone(p.zone, offset))
    return date(p.year, p.month, p.day, p.hour, p.minute, p.second, p.nsec, default)

