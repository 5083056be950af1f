"""Go's reference-time layouts (``"2006-01-02 15:04:05"``): formatting and parsing fields.

``chunks(layout)`` splits a layout exactly as Go's ``nextStdChunk`` does (``Jan`` but not
``January``-less ``Janet``, ``_2``, ``002``, ``.000``/``,999`` fractions, ``Z07:00`` ...);
``format_fields`` writes a civil time with them; ``parse_fields`` reads one back with
Go's rules and Go's ``parsing time "..." as "...": cannot parse ...`` errors. The civil
calendar helpers work for any year (Go's zero time is year 1, ``Parse("15:04")`` gives
year 0), which ``datetime`` cannot. Standard library only.
"""
from __future__ import annotations

from typing import Callable, Dict, List, NamedTuple, Optional, Tuple

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
    simple = {
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


# -- parsing ----------------------------------------------------------------------------

class ParseError(ValueError):
    """Go's ``*time.ParseError``; the message is Go's."""


def _q(s: str) -> str:
    from ccm.gocompat.duration import _quote
    return _quote(s)


class Parsed(NamedTuple):
    year: int
    month: int
    day: int
    hour: int
    minute: int
    second: int
    nsec: int
    utc: bool          # a "Z" or "UTC" zone was read
    offset: Optional[int]
    zone: str


class _Bad(Exception):
    pass


class _Range(Exception):
    pass


def _getnum(s: str, fixed: bool) -> Tuple[int, str]:
    if not s[:1].isdigit() or not s[:1].isascii():
        raise _Bad
    if not (len(s) > 1 and "0" <= s[1] <= "9"):
        if fixed:
            raise _Bad
        return int(s[0]), s[1:]
    return int(s[:2]), s[2:]


def _getnum3(s: str, fixed: bool) -> Tuple[int, str]:
    i = 0
    while i < 3 and i < len(s) and "0" <= s[i] <= "9":
        i += 1
    if i == 0 or (fixed and i != 3):
        raise _Bad
    return int(s[:i]), s[i:]


def _lookup(names: tuple, value: str) -> Tuple[int, str]:
    for i, name in enumerate(names):
        if len(value) >= len(name) and value[:len(name)].lower() == name.lower():
            return i, value[len(name):]
    raise _Bad


def _skip(value: str, prefix: str) -> str:
    while prefix:
        if prefix[0] == " ":
            if value and value[0] != " ":
                raise _Bad
            prefix, value = prefix.lstrip(" "), value.lstrip(" ")
            continue
        if not value or value[0] != prefix[0]:
            raise _Bad
        prefix, value = prefix[1:], value[1:]
    return value


def _nanos(value: str, n: int) -> int:
    if value[:1] not in (".", ","):
        raise _Bad
    digits = value[1:min(n, 10)]
    if not digits.isdigit() or not digits.isascii():
        raise _Bad
    return int(digits) * 10 ** (10 - min(n, 10))


def _zone_name_length(value: str) -> int:
    if len(value) < 3:
        return 0
    if value[:4] in ("ChST", "MeST"):
        return 4
    if value[:3] == "GMT":
        return 3 + _signed_offset(value[3:])
    if value[0] in "+-":
        return _signed_offset(value)
    upper = 0
    while upper < min(6, len(value)) and "A" <= value[upper] <= "Z":
        upper += 1
    if upper == 3 or (upper == 5 and value[4] == "T") or (upper == 4 and (value[3] == "T" or value[:4] == "WITA")):
        return upper
    return 0


def _signed_offset(value: str) -> int:
    if value[:1] not in ("+", "-"):
        return 0
    i = 1
    while i < len(value) and "0" <= value[i] <= "9":
        i += 1
    if i == 1 or int(value[1:i]) > 23:
        return 0
    return i


def _zone_offset(code: int, value: str) -> Tuple[int, str]:
    if code in (ISO_COLON_TZ, NUM_COLON_TZ):
        if len(value) < 6 or value[3] != ":":
            raise _Bad
        parts, value = (value[1:3], value[4:6], "00"), value[6:]
    elif code in (NUM_SHORT_TZ, ISO_SHORT_TZ):
        if len(value) < 3:
            raise _Bad
        parts, value = (value[1:3], "00", "00"), value[3:]
    elif code in (ISO_COLON_SECONDS_TZ, NUM_COLON_SECONDS_TZ):
        if len(value) < 9 or value[3] != ":" or value[6] != ":":
            raise _Bad
        parts, value = (value[1:3], value[4:6], value[7:9]), value[9:]
    elif code in (ISO_SECONDS_TZ, NUM_SECONDS_TZ):
        if len(value) < 7:
            raise _Bad
        parts, value = (value[1:3], value[3:5], value[5:7]), value[7:]
    else:
        if len(value) < 5:
            raise _Bad
        parts, value = (value[1:3], value[3:5], "00"), value[5:]
    return parts, value   # type: ignore[return-value]  # parts checked by the caller


class _State:
    """What a parse has read so far (Go's local variables in ``parse``)."""

    __slots__ = ("year", "month", "day", "yday", "hour", "minute", "second", "nsec", "pm", "am", "utc",
                 "offset", "zone", "range_error")

    def __init__(self) -> None:
        self.year, self.month, self.day, self.yday = 0, -1, -1, -1
        self.hour = self.minute = self.second = self.nsec = 0
        self.pm = self.am = self.utc = False
        self.offset: Optional[int] = None
        self.zone = ""
        self.range_error = ""


_Reader = Callable[["_State", Chunk, str, List[Chunk]], str]


def _read_year(st: _State, chunk: Chunk, value: str, following: List[Chunk]) -> str:
    if len(value) < 2 or not value[:2].isascii() or not value[:2].isdigit():
        raise _Bad
    year = int(value[:2])
    st.year = year + (1900 if year >= 69 else 2000)
    return value[2:]


def _read_long_year(st: _State, chunk: Chunk, value: str, following: List[Chunk]) -> str:
    if len(value) < 4 or not value[:4].isascii() or not value[:4].isdigit():
        raise _Bad
    st.year = int(value[:4])
    return value[4:]


def _read_month_name(st: _State, chunk: Chunk, value: str, following: List[Chunk]) -> str:
    names = LONG_MONTHS if chunk.code == LONG_MONTH else tuple(m[:3] for m in LONG_MONTHS)
    index, value = _lookup(names, value)
    st.month = index + 1
    return value


def _read_weekday(st: _State, chunk: Chunk, value: str, following: List[Chunk]) -> str:
    names = LONG_DAYS if chunk.code == LONG_WEEKDAY else tuple(d[:3] for d in LONG_DAYS)
    return _lookup(names, value)[1]   # checked, otherwise ignored (as in Go)


def _read_day(st: _State, chunk: Chunk, value: str, following: List[Chunk]) -> str:
    if chunk.code == UNDER_DAY and value[:1] == " ":
        value = value[1:]
    st.day, value = _getnum(value, chunk.code == ZERO_DAY)
    return value


def _read_yday(st: _State, chunk: Chunk, value: str, following: List[Chunk]) -> str:
    for _ in range(2):
        if chunk.code == UNDER_YDAY and value[:1] == " ":
            value = value[1:]
    st.yday, value = _getnum3(value, chunk.code == ZERO_YDAY)
    return value


def _read_num_month(st: _State, chunk: Chunk, value: str, following: List[Chunk]) -> str:
    st.month, value = _getnum(value, chunk.code == ZERO_MONTH)
    if not 0 < st.month <= 12:
        st.range_error = "month"
    return value


def _read_hour(st: _State, chunk: Chunk, value: str, following: List[Chunk]) -> str:
    st.hour, value = _getnum(value, chunk.code == ZERO_HOUR12)
    if st.hour > (23 if chunk.code == HOUR else 12):
        st.range_error = "hour"
    return value


def _read_minute(st: _State, chunk: Chunk, value: str, following: List[Chunk]) -> str:
    st.minute, value = _getnum(value, chunk.code == ZERO_MINUTE)
    if st.minute >= 60:
        st.range_error = "minute"
    return value


def _read_pm(st: _State, chunk: Chunk, value: str, following: List[Chunk]) -> str:
    mark = value[:2]
    pm, am = ("PM", "AM") if chunk.code == PM else ("pm", "am")
    if mark == pm:
        st.pm = True
    elif mark == am:
        st.am = True
    else:
        raise _Bad
    return value[2:]


def _read_zone_name(st: _State, chunk: Chunk, value: str, following: List[Chunk]) -> str:
    if value[:3] == "UTC":
        st.utc = True
        return value[3:]
    n = _zone_name_length(value)
    if not n:
        raise _Bad
    st.zone = value[:n]
    return value[n:]


def _read_frac0(st: _State, chunk: Chunk, value: str, following: List[Chunk]) -> str:
    n = 1 + chunk.digits
    if len(value) < n:
        raise _Bad
    st.nsec = _nanos(value, n)
    return value[n:]


def _read_frac9(st: _State, chunk: Chunk, value: str, following: List[Chunk]) -> str:
    if len(value) < 2 or value[0] not in ".," or not "0" <= value[1] <= "9":
        return value   # the fraction is optional
    i = 0
    while i + 1 < len(value) and "0" <= value[i + 1] <= "9":
        i += 1
    st.nsec = _nanos(value, 1 + i)
    return value[1 + i:]


def _read_second(st: _State, chunk: Chunk, value: str, following: List[Chunk]) -> str:
    st.second, value = _getnum(value, chunk.code == ZERO_SECOND)
    if st.second >= 60:
        st.range_error = "second"
        return value
    # a fraction in the input but not in the layout is read anyway (Go's special case)
    if len(value) >= 2 and value[0] in ".," and "0" <= value[1] <= "9":
        nxt = next((c for c in following if c.code != 0), None)
        if nxt is not None and nxt.code in (FRAC0, FRAC9):
            return value
        n = 2
        while n < len(value) and "0" <= value[n] <= "9":
            n += 1
        st.nsec = _nanos(value, n)
        value = value[n:]
    return value


def _read_zone(st: _State, chunk: Chunk, value: str, following: List[Chunk]) -> str:
    code = chunk.code
    if code in _ISO and value[:1] == "Z":
        st.utc = True
        return value[1:]
    parts, rest = _zone_offset(code, value)
    hh, mm, ss = (_getnum(p, True)[0] for p in parts)
    if hh > 24:
        st.range_error = "time zone offset hour"
    if mm > 60:
        st.range_error = "time zone offset minute"
    if ss > 60:
        st.range_error = "time zone offset second"
    offset = (hh * 60 + mm) * 60 + ss
    if value[0] == "-":
        offset = -offset
    elif value[0] != "+":
        raise _Bad
    st.offset = offset
    return rest


_READERS: Dict[int, _Reader] = {
    YEAR: _read_year, LONG_YEAR: _read_long_year, MONTH: _read_month_name, LONG_MONTH: _read_month_name,
    NUM_MONTH: _read_num_month, ZERO_MONTH: _read_num_month,
    WEEKDAY: _read_weekday, LONG_WEEKDAY: _read_weekday, DAY: _read_day, UNDER_DAY: _read_day,
    ZERO_DAY: _read_day, UNDER_YDAY: _read_yday, ZERO_YDAY: _read_yday, HOUR: _read_hour,
    HOUR12: _read_hour, ZERO_HOUR12: _read_hour, MINUTE: _read_minute, ZERO_MINUTE: _read_minute,
    SECOND: _read_second, ZERO_SECOND: _read_second, PM: _read_pm, PM_LOWER: _read_pm, TZ: _read_zone_name,
    FRAC0: _read_frac0, FRAC9: _read_frac9,
}
_READERS.update({code: _read_zone for code in _ZONES})


def parse_fields(layout: str, text: str) -> Parsed:
    """Read ``text`` with ``layout`` as Go's ``time.Parse`` does; raise ``ParseError``."""
    st = _State()
    value = text
    items = chunks(layout)
    for index, chunk in enumerate(items):
        if chunk.code == 0:
            try:
                value = _skip(value, chunk.text)
            except _Bad:
                raise ParseError(f"parsing time {_q(text)} as {_q(layout)}: cannot parse "
                                 f"{_q(value)} as {_q(chunk.text)}") from None
            continue
        hold = value
        try:
            value = _READERS[chunk.code](st, chunk, value, items[index + 1:])
        except (_Bad, ValueError):
            raise ParseError(f"parsing time {_q(text)} as {_q(layout)}: cannot parse "
                             f"{_q(hold)} as {_q(chunk.text)}") from None
        if st.range_error:
            raise ParseError(f"parsing time {_q(text)}: {st.range_error} out of range")
    if value:
        raise ParseError(f"parsing time {_q(text)}: extra text: {_q(value)}")
    return _finish(st, text, value)


def _finish(st: _State, text: str, value: str) -> Parsed:
    if st.pm and st.hour < 12:
        st.hour += 12
    elif st.am and st.hour == 12:
        st.hour = 0
    if st.yday >= 0:
        _apply_yday(st, text)
    else:
        st.month = 1 if st.month < 0 else st.month
        st.day = 1 if st.day < 0 else st.day
    if st.day < 1 or st.day > days_in(st.month, st.year):
        raise ParseError(f"parsing time {_q(text)}: day out of range")
    return Parsed(st.year, st.month, st.day, st.hour, st.minute, st.second, st.nsec, st.utc,
                  st.offset, st.zone)


def _apply_yday(st: _State, text: str) -> None:
    yday, m, d = st.yday, 0, 0
    if is_leap(st.year):
        if yday == 31 + 29:
            m, d = 2, 29
        elif yday > 31 + 29:
            yday -= 1
    if yday < 1 or yday > 365:
        raise ParseError(f"parsing time {_q(text)}: day-of-year out of range")
    if m == 0:
        before = [0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334, 365]
        m = (yday - 1) // 31 + 1
        if before[m] < yday:
            m += 1
        d = yday - before[m - 1]
    if st.month >= 0 and st.month != m:
        raise ParseError(f"parsing time {_q(text)}: day-of-year does not match month")
    if st.day >= 0 and st.day != d:
        raise ParseError(f"parsing time {_q(text)}: day-of-year does not match day")
    st.month, st.day = m, d
