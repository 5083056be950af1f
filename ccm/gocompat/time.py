"""The value ``now()`` returns: a Go ``time.Time`` look-alike.

Supports the methods templates use (``Year()``, ``Unix()``, ``Format(layout)``
with Go reference-time layouts, ...) and prints like Go's ``Time.String()``
(without the monotonic clock suffix). Not: durations or time arithmetic.
"""
from __future__ import annotations

import datetime
import re

from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

_MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August",
           "September", "October", "November", "December"]
_DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]

# Go layout elements, longest first so "January" wins over "Jan" and "2006" over "06"
_LAYOUT = re.compile(
    r"January|Monday|2006|-07:00:00|-07:00|-0700|Z07:00|Z0700|MST|Jan|Mon|"
    r"\.0+|\.9+|01|02|_2|03|04|05|06|15|PM|pm|-07|Z07|1|2|3|4|5"
)


class GoTime:
    __slots__ = ("dt",)

    def __init__(self, dt: datetime.datetime) -> None:
        self.dt = dt

    def Year(self) -> int:  # noqa: N802 - Go method names are the API
        return self.dt.year

    def Month(self) -> int:  # noqa: N802
        return self.dt.month

    def Day(self) -> int:  # noqa: N802
        return self.dt.day

    def Hour(self) -> int:  # noqa: N802
        return self.dt.hour

    def Minute(self) -> int:  # noqa: N802
        return self.dt.minute

    def Second(self) -> int:  # noqa: N802
        return self.dt.second

    def Weekday(self) -> str:  # noqa: N802
        return _DAYS[self.dt.weekday()]

    def YearDay(self) -> int:  # noqa: N802
        return self.dt.timetuple().tm_yday

    def Unix(self) -> int:  # noqa: N802
        return int(self.dt.timestamp())

    def UnixMilli(self) -> int:  # noqa: N802
        return int(self.dt.timestamp() * 1000)

    def UnixNano(self) -> int:  # noqa: N802
        return int(self.dt.timestamp()) * 1_000_000_000 + self.dt.microsecond * 1000

    def UTC(self) -> "GoTime":  # noqa: N802
        return GoTime(self.dt.astimezone(datetime.timezone.utc))

    def Format(self, layout: Any) -> str:  # noqa: N802
        return _LAYOUT.sub(lambda m: self._element(m.group(0)), str(layout))

    def String(self) -> str:  # noqa: N802
        return self.Format("2006-01-02 15:04:05.999999999 -0700 MST")

    def rfc3339(self) -> str:
        return self.Format("2006-01-02T15:04:05.999999999Z07:00")

    def __str__(self) -> str:
        return self.String()

    def __repr__(self) -> str:
        return f"GoTime({self.dt.isoformat()})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, GoTime) and self.dt == other.dt

    def __hash__(self) -> int:
        return hash(self.dt)

    def _offset(self, sep: str, seconds: bool = False, zulu: bool = False) -> str:
        offset = self.dt.utcoffset() or datetime.timedelta(0)
        total = int(offset.total_seconds())
        if zulu and total == 0:
            return "Z"
        sign = "-" if total < 0 else "+"
        total = abs(total)
        text = f"{sign}{total // 3600:02d}{sep}{total % 3600 // 60:02d}"
        return text + (f"{sep}{total % 60:02d}" if seconds else "")

    def _element(self, token: str) -> str:
        dt = self.dt
        if token.startswith("."):
            digits = f"{dt.microsecond:06d}000"[:len(token) - 1]
            if token[1] == "9":
                digits = digits.rstrip("0")
                return "." + digits if digits else ""
            return "." + digits
        hour12 = dt.hour % 12 or 12
        table = {
            "January": _MONTHS[dt.month - 1], "Jan": _MONTHS[dt.month - 1][:3],
            "Monday": _DAYS[dt.weekday()], "Mon": _DAYS[dt.weekday()][:3],
            "2006": f"{dt.year:04d}", "06": f"{dt.year % 100:02d}",
            "01": f"{dt.month:02d}", "1": str(dt.month),
            "02": f"{dt.day:02d}", "_2": f"{dt.day:2d}", "2": str(dt.day),
            "15": f"{dt.hour:02d}", "03": f"{hour12:02d}", "3": str(hour12),
            "04": f"{dt.minute:02d}", "4": str(dt.minute),
            "05": f"{dt.second:02d}", "5": str(dt.second),
            "PM": "PM" if dt.hour >= 12 else "AM", "pm": "pm" if dt.hour >= 12 else "am",
            "MST": dt.tzname() or self._offset(""),
            "-0700": self._offset(""), "-07:00": self._offset(":"), "-07": self._offset("")[:3],
            "-07:00:00": self._offset(":", seconds=True),
            "Z07:00": self._offset(":", zulu=True), "Z0700": self._offset("", zulu=True),
            "Z07": self._offset("", zulu=True)[:3],
        }
        return table[token]
