"""Go's ``time.RFC3339Nano`` text of a UTC time, both ways (event and state timestamps).

Pure functions of their arguments: no clock is read, nothing but the standard library's
``datetime`` (to parse, and for years outside 1-9999) is used, so the contracts
(``ccm.model.events``) may use them.
"""
from __future__ import annotations

from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Optional, Tuple

ZERO_TIME = "0001-01-01T00:00:00Z"   # Go's zero time.Time

_last_second: Tuple[Optional[int], str] = (None, "")   # one entry: events come in bursts


def rfc3339(ns: Optional[int]) -> str:
    """``RFC3339Nano`` in UTC of nanoseconds since the epoch: fraction trimmed of trailing
    zeros, none when zero; ``ZERO_TIME`` for 0 or None."""
    global _last_second
    if not ns:
        return ZERO_TIME
    if type(ns) is not int:
        ns = int(ns)
    secs, frac = divmod(ns, 1_000_000_000)
    last = _last_second
    if last[0] == secs:
        base = last[1]
    else:
        days, clock = divmod(secs, 86400)
        year, month, day = civil_date(days)
        if 1 <= year <= 9999:   # what strftime printed, without building a datetime
            hours, rest = divmod(clock, 3600)
            base = "%d-%02d-%02dT%02d:%02d:%02d" % (year, month, day, hours, rest // 60, rest % 60)
        else:
            from datetime import datetime, timezone

            base = datetime.fromtimestamp(secs, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")
        _last_second = (secs, base)
    if frac:   # nine digits, without a format spec to parse (file status formats every mtime)
        return f"{base}.{str(frac).zfill(9).rstrip('0')}Z"
    return base + "Z"


def civil_date(days: int) -> Tuple[int, int, int]:
    """(year, month, day) of the day ``days`` after 1970-01-01 in the proleptic Gregorian
    calendar (Howard Hinnant's ``civil_from_days``; ``//`` floors, so negative days work)."""
    z = days + 719468
    era = z // 146097
    doe = z - era * 146097                                   # [0, 146096]
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365   # [0, 399]
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)          # [0, 365], from March 1
    mp = (5 * doy + 2) // 153                                # [0, 11], March = 0
    month = mp + 3 if mp < 10 else mp - 9
    return yoe + era * 400 + (month <= 2), month, doy - (153 * mp + 2) // 5 + 1


def parse_rfc3339(text: str) -> int:
    """Nanoseconds since the epoch of an RFC 3339 timestamp (as written by us or upstream);
    0 for Go's zero time or an empty text."""
    if not text or text.startswith("0001-01-01"):
        return 0
    s = text.strip()
    tz = 0
    if s.endswith("Z"):
        s = s[:-1]
    else:
        sign_pos = max(s.rfind("+"), s.rfind("-"))
        if sign_pos > 10:
            off = s[sign_pos:]
            s = s[:sign_pos]
            hh, mm = off[1:].split(":")
            tz = (int(hh) * 3600 + int(mm) * 60) * (1 if off[0] == "+" else -1)
    from datetime import datetime, timezone

    frac_ns = 0
    if "." in s:
        s, frac = s.split(".", 1)
        frac_ns = int(frac.ljust(9, "0")[:9])
    dt = datetime.strptime(s, "%Y-%m-%dT%H:%M:%S").replace(tzinfo=timezone.utc)
    return (int(dt.timestamp()) - tz) * 1_000_000_000 + frac_ns
