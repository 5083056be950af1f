"""Go's reference-time layouts (``"2006-01-02 15:04:05"``): formatting and parsing fields.

``chunks(layout)`` splits a layout exactly as Go's ``nextStdChunk`` does (``Jan`` but not
the ``Mon`` of ``Month``, ``_2``, ``002``, ``.000``/``,999`` fractions, ``Z07:00`` ...);
``format_fields`` writes a civil time with them (``ccm.gocompat.timeparse`` reads one
back). The civil calendar helpers work for any year (Go's zero time is year 1,
``Parse("15:04")`` gives year 0), which ``datetime`` cannot. Standard library only.
"""
from __future__ import annotations
from typing import NamedTuple
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Callable, Dict, List, Optional, Tuple


LONG_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
               "September", "October", "November", "December")
LONG_DAYS = ("Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday")

# chunk codes
(LONG_MONTH, MONTH, NUM_MONTH, ZERO_MONTH, LONG_WEEKDAY, WEEKDAY, DAY, UNDER_DAY, ZERO_DAY,
 UNDER_YDAY, ZERO_YDAY, HOUR, HOUR12, ZERO_HOUR12, MINUTE, ZERO_MINUTE, SECOND, ZERO_SECOND,
 LONG_YEAR, YEAR, PM, PM_LOWER, TZ, ISO_TZ, ISO_SECONDS_TZ, ISO_SHORT_TZ, ISO_COLON_TZ,
 ISO_COLON_SECONDS_TZ, NUM_TZ, NUM_SECONDS_TZ, NUM_SHORT_TZ, NUM_COLON_TZ, NUM_COLON_SECONDS_TZ,
 FRAC0, FRAC9) = range(1, 36)

_ZERO_X = {"1": ZERO_MONTH, "2": ZERO_DAY, "3": ZERO_HOUR12, "4": ZERO_MINUTE, "5": ZERO_SECOND, "6": YEAR}
_DASH_ZONES = (("-070000", NUM_SECONDS_TZ), ("-07:00:00", NUM_COLON_SECONDS_TZ), ("-0700", NUM_TZ),
               ("-07:00", NUM_COLON_TZ), ("-07", NUM_SHORT_TZ))
_Z_ZONES = (("Z070000", ISO_SECONDS_TZ), ("Z07:00:00", ISO_COLON_SECONDS_TZ), ("Z0700", ISO_TZ),
            ("Z07:00", ISO_COLON_TZ), ("Z07", ISO_SHORT_TZ))
_ISO = frozenset({ISO_TZ, ISO_SECONDS_TZ, ISO_SHORT_TZ, ISO_COLON_TZ, ISO_COLON_SECONDS_TZ})
_ZONES = _ISO | {NUM_TZ, NUM_SECONDS_TZ, NUM_SHORT_TZ, NUM_COLON_TZ, NUM_COLON_SECONDS_TZ}


class Chunk(NamedTuple):
    """One layout element: ``code`` (0 for literal text), its text, and for fractions
    the digit count and separator."""
    code: int
    text: str
    digits: int = 0


class Fields(NamedTuple):
    """A civil time as formatting needs it."""
    year: int
    month: int
    day: int
    yday: int
    weekday: int      # Sunday = 0
    hour: int
    minute: int
    second: int
    nsec: int
    offset: int       # seconds east of UTC
    zone: str         # abbreviation ("" when unknown)


# -- civil calendar ---------------------------------------------------------------------

def days_from_civil(y: int, m: int, d: int) -> int:
    """Days since 1970-01-01 of a proleptic Gregorian date (any year)."""
    y -= m <= 2
    era = y // 400
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def civil_from_days(z: int) -> Tuple[int, int, int]:
    z += 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + (3 if mp < 10 else -9)
    return yoe + era * 400 + (m <= 2), m, d


def is_leap(year: int) -> bool:
    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)


def days_in(month: int, year: int) -> int:
    if month == 2:
        return 29 if is_leap(year) else 28
    return 30 if month in (4, 6, 9, 11) else 31


def fields_of(local_seconds: int, nsec: int, offset: int, zone: str) -> Fields:
    """The civil fields of ``local_seconds`` (Unix seconds already shifted by ``offset``)."""
    days, secs = divmod(local_seconds, 86400)
    y, m, d = civil_from_days(days)
    yday = days - days_from_civil(y, 1, 1) + 1
    return Fields(y, m, d, yday, (days + 4) % 7, secs // 3600, secs % 3600 // 60, secs % 60,
                  nsec, offset, zone)


# -- layouts ----------------------------------------------------------------------------

# candidates per first character, in Go's order: (text, code, must not be followed by a
# lower-case letter); code None marks "_2006", a literal "_" before the year
_CANDIDATES = {
    "J": (("January", LONG_MONTH, False), ("Jan", MONTH, True)),
    "M": (("Monday", LONG_WEEKDAY, False), ("Mon", WEEKDAY, True), ("MST", TZ, False)),
    "0": tuple((f"0{d}", code, False) for d, code in _ZERO_X.items()) + (("002", ZERO_YDAY, False),),
    "1": (("15", HOUR, False), ("1", NUM_MONTH, False)),
    "2": (("2006", LONG_YEAR, False), ("2", DAY, False)),
    "_": (("_2006", None, False), ("_2", UNDER_DAY, False), ("__2", UNDER_YDAY, False)),
    "3": (("3", HOUR12, False),), "4": (("4", MINUTE, False),), "5": (("5", SECOND, False),),
    "P": (("PM", PM, False),), "p": (("pm", PM_LOWER, False),),
    "-": tuple((text, code, False) for text, code in _DASH_ZONES),
    "Z": tuple((text, code, False) for text, code in _Z_ZONES),
}


def _std_at(layout: str, i: int) -> Optional[Tuple[int, int, int]]:
    """(code, end, digits) of the layout element starting at ``i``, or None."""
    c = layout[i]
    if c in ".,":
        return _fraction_at(layout, i)
    for text, code, no_lower in _CANDIDATES.get(c, ()):
        if not layout.startswith(text, i):
            continue
        end = i + len(text)
        if no_lower and end < len(layout) and "a" <= layout[end] <= "z":
            continue   # "Month" is no "Mon"
        return None if code is None else (code, end, 0)
    return None


def _fraction_at(layout: str, i: int) -> Optional[Tuple[int, int, int]]:
    """``.000``/``,999``: a fraction when the run of 0s or 9s is not followed by a digit."""
    if i + 1 >= len(layout) or layout[i + 1] not in "09":
        return None
    j = i + 1
    while j < len(layout) and layout[j] == layout[i + 1]:
        j += 1
    if j < len(layout) and "0" <= layout[j] <= "9":
        return None
    return (FRAC0 if layout[i + 1] == "0" else FRAC9), j, j - (i + 1)


def chunks(layout: str) -> List[Chunk]:
    """The layout as literal text and elements, in order (Go's ``nextStdChunk`` loop)."""
    out: List[Chunk] = []
    start = i = 0
    while i < len(layout):
        found = _std_at(layout, i)
        if found is None:
            i += 1
            continue
        code, end, digits = found
        if i > start:
            out.append(Chunk(0, layout[start:i]))
        out.append(Chunk(code, layout[i:end], digits))
        start = i = end
    if start < len(layout):
        out.append(Chunk(0, layout[start:]))
    return out


# -- formatting -------------------------------------------------------------------------

def _zone_text(code: int, offset: int) -> str:
    if offset == 0 and code in _ISO:
        return "Z"
    minutes = offset // 60 if offset >= 0 else -((-offset) // 60)
    sign = "-" if minutes < 0 else "+"
    minutes, absolute = abs(minutes), abs(offset)
    text = f"{sign}{minutes // 60:02d}"
    colon = code in (ISO_COLON_TZ, NUM_COLON_TZ, ISO_COLON_SECONDS_TZ, NUM_COLON_SECONDS_TZ)
    if code not in (NUM_SHORT_TZ, ISO_SHORT_TZ):
        text += (":" if colon else "") + f"{minutes % 60:02d}"
    if code in (ISO_SECONDS_TZ, NUM_SECONDS_TZ, NUM_COLON_SECONDS_TZ, ISO_COLON_SECONDS_TZ):
        text += (":" if colon else "") + f"{absolute % 60:02d}"
    return text


def _nano(chunk: Chunk, nsec: int) -> str:
    trim = chunk.code == FRAC9
    if trim and (chunk.digits == 0 or nsec == 0):
        return ""
    digits = f"{nsec:09d}"[:chunk.digits] if chunk.digits < 9 else f"{nsec:09d}"
    if trim:
        digits = digits.rstrip("0")
        if not digits:
            return ""
    return chunk.text[0] + digits


def _element(chunk: Chunk, f: Fields) -> str:
    code = chunk.code
    hour12 = f.hour % 12 or 12
    simple: Dict[int, Callable[[], str]] = {
        YEAR: lambda: f"{abs(f.year) % 100:02d}", LONG_YEAR: lambda: _int(f.year, 4),
        MONTH: lambda: LONG_MONTHS[f.month - 1][:3], LONG_MONTH: lambda: LONG_MONTHS[f.month - 1],
        NUM_MONTH: lambda: str(f.month), ZERO_MONTH: lambda: f"{f.month:02d}",
        WEEKDAY: lambda: LONG_DAYS[f.weekday][:3], LONG_WEEKDAY: lambda: LONG_DAYS[f.weekday],
        DAY: lambda: str(f.day), UNDER_DAY: lambda: f"{f.day:2d}", ZERO_DAY: lambda: f"{f.day:02d}",
        UNDER_YDAY: lambda: f"{f.yday:3d}", ZERO_YDAY: lambda: f"{f.yday:03d}",
        HOUR: lambda: f"{f.hour:02d}", HOUR12: lambda: str(hour12), ZERO_HOUR12: lambda: f"{hour12:02d}",
        MINUTE: lambda: str(f.minute), ZERO_MINUTE: lambda: f"{f.minute:02d}",
        SECOND: lambda: str(f.second), ZERO_SECOND: lambda: f"{f.second:02d}",
        PM: lambda: "PM" if f.hour >= 12 else "AM", PM_LOWER: lambda: "pm" if f.hour >= 12 else "am",
    }
    if code in simple:
        return simple[code]()
    if code in _ZONES:
        return _zone_text(code, f.offset)
    if code == TZ:
        if f.zone:
            return f.zone
        minutes = abs(f.offset) // 60
        return f"{'-' if f.offset < 0 else '+'}{minutes // 60:02d}{minutes % 60:02d}"
    return _nano(chunk, f.nsec)


def _int(value: int, width: int) -> str:
    return ("-" if value < 0 else "") + f"{abs(value):0{width}d}"


def format_fields(layout: str, f: Fields) -> str:
    """``Time.Format(layout)`` of the civil time ``f``."""
    return "".join(c.text if c.code == 0 else _element(c, f) for c in chunks(layout))
