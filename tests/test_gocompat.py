"""ccm.gocompat: the one place Go's fmt/strconv/json/time/reflect rules live."""
from __future__ import annotations

import pytest

from ccm.gocompat.fmt import go_sprintf
from ccm.gocompat.strconv import quote, quote_rune
from ccm.model.errors import ValidationError


@pytest.mark.parametrize("text, want", [
    ("\a\v", '"\\a\\v"'),            # strconv.Quote names these (the old error-message quoter wrote \x07 \x0b)
    ("\b\f\n\r\t", '"\\b\\f\\n\\r\\t"'),
    ('say "hi" \\ ok', '"say \\"hi\\" \\\\ ok"'),
    ("\x00\x1b\x7f", '"\\x00\\x1b\\x7f"'),
    ("héllo ☃", '"héllo ☃"'),
    ("\u200b", '"\\u200b"'),
])
def test_quote_is_go_strconv_quote(text, want):
    assert quote(text) == want
    assert go_sprintf("%q", text) == want


def test_quote_ascii_and_runes():
    assert quote("é", ascii_only=True) == '"\\u00e9"'
    assert go_sprintf("%+q", "é") == '"\\u00e9"'
    assert quote_rune(ord("'")) == "'\\''" and quote_rune(7) == "'\\a'"


def test_error_messages_quote_like_go():
    from ccm.resources.package import check_name

    with pytest.raises(ValidationError) as err:
        check_name("bad\vname;")
    assert '"bad\\vname;"' in str(err.value)


def test_go_compatibility_lives_only_in_gocompat():
    """The architecture refactor's compatibility aliases are gone: one import path each."""
    import importlib.util

    for name in ("ccm.gojson", "ccm.templates.gofmt", "ccm.expr.gotime"):
        assert importlib.util.find_spec(name) is None, name

def test_rfc3339_dates_are_the_calendar_gmtime_gives():
    """``ccm.gocompat.rfc3339`` computes the civil date itself (the contracts read no clock
    and import no ``time``): every second from year 1 to 9999 dates as ``time.gmtime``."""
    import random
    import time

    from ccm.gocompat.rfc3339 import civil_date, rfc3339

    rng = random.Random(3339)
    edges = [0, -1, 1, 86399, 86400, -86400, 951782400, 951868800, 4107542400, -62135596800, 253402300799]
    for secs in edges + [rng.randint(-62135596800, 253402300799) for _ in range(20000)]:
        tm = time.gmtime(secs)
        assert civil_date(secs // 86400) == tuple(tm[:3]), secs
        assert rfc3339(secs * 10**9 + 7) == "%d-%02d-%02dT%02d:%02d:%02d.000000007Z" % tm[:6], secs


def test_reflect_member_reaches_public_fields_and_methods_only():
    from ccm.gocompat.reflect import has_field, member

    class Value:
        Name = "web"

        def Method(self):
            return 1

        _secret = "no"

    absent = object()
    assert member(Value(), "Name", absent) == "web"
    assert member(Value(), "Method", absent)() == 1
    assert member(Value(), "_secret", absent) is absent
    assert member(Value(), "__class__", absent) is absent
    assert member(Value(), "Missing", absent) is absent
    assert has_field(Value(), "Name") and has_field(Value(), "_secret") and not has_field(Value(), "Missing")
