"""Go's time package in ccm.gocompat: layouts (Format/Parse), durations, locations.

Expected values are Go's (its documentation's examples and ``time`` behaviour)."""
from __future__ import annotations

import pytest

from ccm.gocompat import time as gotime
from ccm.gocompat.duration import HOUR, MILLISECOND, MINUTE, SECOND, Duration, DurationError, parse_duration
from ccm.gocompat.time import UTC, GoTime, date, fixed_zone, load_location, parse, parse_in_location
from ccm.gocompat.timeparse import ParseError

# Go's reference time in its own zone (MST, -0700) and a time with nanoseconds
REF = date(2006, 1, 2, 15, 4, 5, 0, fixed_zone("MST", -7 * 3600))
NANO = date(2009, 11, 10, 23, 0, 0, 123456789, UTC)


@pytest.mark.parametrize("layout,want", [
    ("Mon Jan _2 15:04:05 2006", "Mon Jan  2 15:04:05 2006"),                  # ANSIC
    ("Mon Jan _2 15:04:05 MST 2006", "Mon Jan  2 15:04:05 MST 2006"),          # UnixDate
    ("02 Jan 06 15:04 -0700", "02 Jan 06 15:04 -0700"),                        # RFC822Z
    ("Monday, 02-Jan-06 15:04:05 MST", "Monday, 02-Jan-06 15:04:05 MST"),      # RFC850
    ("2006-01-02T15:04:05Z07:00", "2006-01-02T15:04:05-07:00"),                # RFC3339
    ("3:04PM", "3:04PM"),                                                       # Kitchen
    ("Jan _2 15:04:05.000", "Jan  2 15:04:05.000"),                            # StampMilli
    ("2006-01-02 15:04:05", "2006-01-02 15:04:05"),                            # DateTime
    ("__2 002", "  2 002"),                                                     # day of year
    ("Month: January (01, 1) pm PM", "Month: January (01, 1) pm PM"),          # "Month" is no "Mon"
    ("_2006", "_2006"),
    ("-07 -07:00:00 Z0700 -070000", "-07 -07:00:00 -0700 -070000"),
])
def test_format_reference_time(layout: str, want: str) -> None:
    assert REF.Format(layout) == want


@pytest.mark.parametrize("layout,want", [
    ("2006-01-02T15:04:05.999999999Z07:00", "2009-11-10T23:00:00.123456789Z"),   # RFC3339Nano
    ("15:04:05.000", "23:00:00.123"),
    ("15:04:05,999", "23:00:00,123"),
    ("15:04:05.000000000000", "23:00:00.123456789000"[:len("23:00:00.") + 9]),
    (".9 .99 .0", ".1 .12 .1"),
    ("3PM 03pm", "11PM 11pm"),
])
def test_format_fractions_and_clock(layout: str, want: str) -> None:
    assert NANO.Format(layout) == want


def test_string_and_zero_time() -> None:
    assert str(NANO) == "2009-11-10 23:00:00.123456789 +0000 UTC"
    assert str(GoTime()) == "0001-01-01 00:00:00 +0000 UTC" and GoTime().IsZero()
    assert str(fixed_zone("", 3600) and date(2024, 3, 1, 0, 0, 0, 0, fixed_zone("", 3600))) == \
        "2024-03-01 00:00:00 +0100 +0100"


@pytest.mark.parametrize("layout,value,want", [
    ("2006-01-02", "2017-12-31", "2017-12-31 00:00:00 +0000 UTC"),
    ("Jan 2, 2006 at 3:04pm (MST)", "Feb 3, 2013 at 7:54pm (UTC)", "2013-02-03 19:54:00 +0000 UTC"),
    ("2006-01-02T15:04:05Z07:00", "2006-01-02T15:04:05+07:00", "2006-01-02 15:04:05 +0700 +0700"),
    ("2006-01-02 15:04:05", "2006-01-02 15:04:05.123", "2006-01-02 15:04:05.123 +0000 UTC"),   # fraction read anyway
    ("15:04", "23:59", "0000-01-01 23:59:00 +0000 UTC"),
    ("06 002", "24 060", "2024-02-29 00:00:00 +0000 UTC"),
    ("Mon Jan _2 2006", "Tue Mar  5 2024", "2024-03-05 00:00:00 +0000 UTC"),
    ("02 Jan 06 15:04 MST", "24 Nov 87 20:30 XYZ", "1987-11-24 20:30:00 +0000 XYZ"),      # unknown zone: +0000
    ("2006-01-02 MST", "2024-01-02 GMT+3", "2024-01-02 03:00:00 +0300 GMT+3"),
])
def test_parse(layout: str, value: str, want: str) -> None:
    assert str(parse(layout, value, UTC, UTC)) == want


@pytest.mark.parametrize("layout,value,message", [
    ("2006-01-02", "x", 'parsing time "x" as "2006-01-02": cannot parse "x" as "2006"'),
    ("2006-01-02", "2017-13-01", 'parsing time "2017-13-01": month out of range'),
    ("2006-01-02", "2017-02-30", 'parsing time "2017-02-30": day out of range'),
    ("2006-01-02", "2017-01-02x", 'parsing time "2017-01-02x": extra text: "x"'),
    ("2006-01-02 15:04", "2017-01-02 25:00", 'parsing time "2017-01-02 25:00": hour out of range'),
    ("Jan 2", "Foo 2", 'parsing time "Foo 2" as "Jan 2": cannot parse "Foo 2" as "Jan"'),
    ("2006-01-02", "2017/01/02", 'parsing time "2017/01/02" as "2006-01-02": cannot parse "/01/02" as "-"'),
])
def test_parse_errors(layout: str, value: str, message: str) -> None:
    with pytest.raises(ParseError) as info:
        parse(layout, value)
    assert str(info.value) == message


def test_locations() -> None:
    zurich = load_location("Europe/Zurich")
    assert str(zurich) == "Europe/Zurich" and zurich.String() == "Europe/Zurich"
    summer = parse_in_location("2006-01-02 15:04", "2023-08-14 00:00", zurich)
    assert str(summer) == "2023-08-14 00:00:00 +0200 CEST"
    assert str(summer.UTC()) == "2023-08-13 22:00:00 +0000 UTC"
    assert str(summer.In(load_location("America/Chicago"))) == "2023-08-13 17:00:00 -0500 CDT"
    winter = parse_in_location("02.01.2006 15:04", "24.11.1987 20:30", zurich)
    assert str(winter) == "1987-11-24 20:30:00 +0100 CET"
    assert load_location("") is UTC and load_location("UTC") is UTC and load_location("Local") is gotime.LOCAL
    for bad in ("Nowhere/Zone", "../etc/passwd", "/etc/localtime"):
        with pytest.raises(gotime.LocationError, match=f"unknown time zone {bad}"):
            load_location(bad)


def test_arithmetic_and_comparison() -> None:
    a = date(2024, 1, 31, 12, 0, 0, 0, UTC)
    assert str(a.AddDate(0, 1, 0)) == "2024-03-02 12:00:00 +0000 UTC"    # Go normalises Feb 31
    assert str(a.Add(Duration(36 * HOUR))) == "2024-02-02 00:00:00 +0000 UTC"
    assert a.Add(Duration(HOUR)).Sub(a) == Duration(HOUR)
    assert a < a.Add(Duration(1)) and a == GoTime(a.sec, 0, fixed_zone("X", 3600))   # instants compare
    assert str(date(2024, 1, 1, 10, 7, 31, 0, UTC).Truncate(Duration(15 * MINUTE))) == "2024-01-01 10:00:00 +0000 UTC"
    assert str(date(2024, 1, 1, 10, 7, 31, 0, UTC).Round(Duration(15 * MINUTE))) == "2024-01-01 10:15:00 +0000 UTC"
    t = date(2024, 3, 5, 0, 0, 0, 0, UTC)
    assert (t.Year(), int(t.Month()), str(t.Month()), t.Day(), str(t.Weekday()), int(t.Weekday()), t.YearDay()) == \
        (2024, 3, "March", 5, "Tuesday", 2, 65)


@pytest.mark.parametrize("text,ns,printed", [
    ("1h15m30.918273645s", HOUR + 15 * MINUTE + 30 * SECOND + 918273645, "1h15m30.918273645s"),
    ("300ms", 300 * MILLISECOND, "300ms"),
    ("-1.5h", -90 * MINUTE, "-1h30m0s"),
    ("2h45m", 165 * MINUTE, "2h45m0s"),
    ("1.5us", 1500, "1.5\u00b5s"),
    ("1\u00b5s", 1000, "1\u00b5s"),
    ("1\u03bcs", 1000, "1\u00b5s"),
    ("10ns", 10, "10ns"),
    ("0", 0, "0s"),
    ("+5m", 5 * MINUTE, "5m0s"),
    (".5s", 500 * MILLISECOND, "500ms"),
    ("2562047h47m16.854775807s", (1 << 63) - 1, "2562047h47m16.854775807s"),
])
def test_parse_and_print_durations(text: str, ns: int, printed: str) -> None:
    d = parse_duration(text)
    assert d.ns == ns and str(d) == printed


@pytest.mark.parametrize("text,message", [
    ("", 'time: invalid duration ""'),
    ("1", 'time: missing unit in duration "1"'),
    ("1d", 'time: unknown unit "d" in duration "1d"'),
    ("x", 'time: invalid duration "x"'),
    (".s", 'time: invalid duration ".s"'),
    ("9223372036854775808ns", 'time: invalid duration "9223372036854775808ns"'),
    ("3000000h", 'time: invalid duration "3000000h"'),
])
def test_duration_errors(text: str, message: str) -> None:
    with pytest.raises(DurationError) as info:
        parse_duration(text)
    assert str(info.value) == message


def test_duration_methods() -> None:
    d = parse_duration("1h30m")
    assert (d.Hours(), d.Minutes(), d.Seconds(), d.Milliseconds()) == (1.5, 90.0, 5400.0, 5400000)
    assert str(parse_duration("1h15m30.918273645s").Round(Duration(SECOND))) == "1h15m31s"
    assert str(parse_duration("1h15m30.918273645s").Truncate(Duration(MINUTE))) == "1h15m0s"
    assert str(parse_duration("-1h").Abs()) == "1h0m0s"
    with pytest.raises(OverflowError):
        Duration(1 << 63)
