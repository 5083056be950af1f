"""Subject tokens and labels: hostile ones are refused with one line naming them."""
from __future__ import annotations

import pytest

from ccm.fleet import subjects
from ccm.fleet.subjects import ReportInputError, check_labels, check_token


@pytest.mark.parametrize("value,reason", [
    ("a.b", "holds '.'"), ("a*", "holds '*'"), ("a>", "holds '>'"), ("a b", "holds a space"),
    ("a\tb", "white space"), ("a\x01b", "control character"), ("", "is empty"),
    ("x" * 10240, "is 10240 characters long"),
])
def test_hostile_tokens_are_refused(value, reason):
    with pytest.raises(ReportInputError) as err:
        check_token("manifest-id", value)
    assert reason in str(err.value) and "manifest-id" in str(err.value) and "\n" not in str(err.value)
    with pytest.raises(ReportInputError):
        subjects.report_subject("0123456789abcdef", value)


@pytest.mark.parametrize("labels,named", [
    ({"role": "web.1"}, "label 'role': value holds '.'"), ({"ro.le": "web"}, "label name 'ro.le' holds '.'"),
    ({"role": "*"}, "holds '*'"), ({"role": ">"}, "holds '>'"), ({"role": "a b"}, "holds a space"),
    ({"role": "x" * 10240}, "value is 10240 characters long"), ({"x" * 10240: "v"}, "label name (a long name)"),
    ({f"k{i}": "v" for i in range(40)}, "40 labels given"),
])
def test_hostile_labels_are_refused_naming_the_label(labels, named):
    with pytest.raises(ReportInputError) as err:
        check_labels(labels)
    assert named in str(err.value)
    assert len(str(err.value)) < 200   # never the 10 KB value itself


def test_good_labels_and_subjects():
    assert check_labels({"role": "web", "dc": "ams-1", "n": "1"}) == {"role": "web", "dc": "ams-1", "n": "1"}
    assert subjects.report_subject("0123456789abcdef", "fedcba9876543210") == \
        "choria.ccm.reports.0123456789abcdef.fedcba9876543210"
    assert subjects.parse_subject("choria.ccm.reports.a.b") == ("a", "b")
    assert subjects.parse_subject("choria.ccm.reports.a.b.c") == ("", "")
    assert subjects.parse_subject("other.ccm.reports.a.b") == ("", "")
    assert subjects.host_filter("abc") == "choria.ccm.reports.abc.*"
