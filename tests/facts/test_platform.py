from __future__ import annotations

import os

import pytest

from ccm.facts.host import format_machine_id
from ccm.facts.platform import etc_reader, parse_keyvals, platform_information

ETC = os.path.join(os.path.dirname(__file__), "fixtures", "etc")


@pytest.mark.parametrize(
    "tree,expected",
    [
        ("debian12", ("debian", "debian", "12.5")),
        ("trixie", ("debian", "debian", "trixie/sid")),
        ("ubuntu2204", ("ubuntu", "debian", "22.04")),
        ("rocky9", ("rocky", "rhel", "9.3")),
        ("centos7", ("centos", "rhel", "7.9.2009")),
        ("stream9", ("centos", "rhel", "9")),
        ("fedora39", ("fedora", "fedora", "39")),
        ("rhel9", ("redhat", "rhel", "9.3")),
        ("alma9", ("almalinux", "rhel", "9.3")),
        ("oracle8", ("oracle", "rhel", "8.9")),
        ("amazon2023", ("amazon", "rhel", "2023.3.20240219")),
        ("alpine319", ("alpine", "alpine", "3.19.1")),
        ("leap155", ("opensuse-leap", "suse", "15.5")),
    ],
)
def test_platform_information(tree, expected):
    assert platform_information(etc_reader(os.path.join(ETC, tree))) == expected


def test_nothing_matches(tmp_path):
    assert platform_information(etc_reader(str(tmp_path))) == ("", "", "")


def test_host_etc_env(monkeypatch):
    monkeypatch.setenv("HOST_ETC", os.path.join(ETC, "rocky9"))
    assert platform_information(etc_reader())[0] == "rocky"


def test_parse_keyvals_and_machine_id():
    assert parse_keyvals('# c\nA="x y"\nB=z\nnoeq\n') == {"A": "x y", "B": "z"}
    assert format_machine_id("3D1219C7C4C5404AAA1F6D2A48ADFDA4\n") == "3d1219c7-c4c5-404a-aa1f-6d2a48adfda4"
