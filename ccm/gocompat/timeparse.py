"""Go's ``time.Parse`` of a layout (``ccm.gocompat.timefmt``) into civil fields.

``parse_fields(layout, text)`` reads ``text`` as Go does: runs of spaces match, a fraction
of a second after the seconds is read even when the layout has none, ``__2``/``002`` day of
year, ``PM``, zone offsets and names, range checks; failures are ``ParseError`` with Go's
``parsing time "..." as "...": cannot parse "..." as "..."`` texts. Standard library only.
"""
from __future__ import annotations


from ccm.gocompat.timefmt import (
    _ISO, _ZONES, DAY, FRAC0, FRAC9, HOUR, HOUR12, LONG_DAYS, LONG_MONTH, LONG_MONTHS, LONG_WEEKDAY, LONG_YEAR,
    MINUTE, MONTH, NUM_COLON_SECONDS_TZ, NUM_COLON_TZ, NUM_MONTH, NUM_SECONDS_TZ, NUM_SHORT_TZ, PM, PM_LOWER,
    SECOND, TZ, UNDER_DAY, UNDER_YDAY, WEEKDAY, YEAR, ZERO_DAY, ZERO_HOUR12, ZERO_MINUTE, ZERO_MONTH,
    ZERO_SECOND, ZERO_YDAY, ISO_COLON_SECONDS_TZ, ISO_COLON_TZ, ISO_SECONDS_TZ, ISO_SHORT_TZ, Chunk, chunks,
    days_in, is_leap,
)
from typing import NamedTuple
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Callable, Dict, List, Optional, Tuple


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


def _lookup(names: Tuple[str, ...], value: str) -> Tuple[int, str]:
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
    scale: int = 10 ** (10 - min(n, 10))
    return int(digits) * scale


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


def _zone_offset(code: int, value: str) -> Tuple[Tuple[str, str, str], str]:
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
    return parts, value


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


if TYPE_CHECKING:
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
