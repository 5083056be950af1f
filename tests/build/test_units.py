"""Pure parts of the build script, without building anything."""
from __future__ import annotations

import sys

import pytest

from .conftest import REPO

sys.path.insert(0, str(REPO))
import build_zipapp as bz  # noqa: E402


def test_parse_wheel_name() -> None:
    dist, version, tags = bz.parse_wheel_name(
        "rpds_py-0.27.1-cp39-cp39-manylinux_2_17_x86_64.manylinux2014_x86_64.whl")
    assert (dist, version) == ("rpds-py", "0.27.1")
    assert ("cp39", "cp39", "manylinux2014_x86_64") in tags


@pytest.mark.parametrize("name,py,ok", [
    ("pyyaml-6.0.3-cp39-cp39-manylinux2014_x86_64.manylinux_2_17_x86_64.whl", "3.9", True),
    ("pyyaml-6.0.3-cp310-cp310-manylinux2014_x86_64.whl", "3.9", False),
    ("psutil-7.2.2-cp36-abi3-manylinux2010_x86_64.manylinux_2_12_x86_64.whl", "3.13", True),
    ("x-1-cp39-cp39-manylinux_2_28_x86_64.whl", "3.9", False),  # glibc 2.28: too new
    ("x-1-cp39-cp39-musllinux_1_2_x86_64.whl", "3.9", False),
    ("attrs-26.1.0-py3-none-any.whl", "3.14", True),
])
def test_supported_tags(name: str, py: str, ok: bool) -> None:
    assert bool(bz.parse_wheel_name(name)[2] & bz.supported_tags(py, "x86_64")) is ok


@pytest.mark.parametrize("member,expected", [
    ("psutil/tests/test_linux.py", None),
    ("jsonschema/benchmarks/x.py", None),
    ("jsonschema/_format.py", "jsonschema/_format.py"),
    ("rpds/__init__.pyi", None),
    ("attrs-26.1.0.dist-info/RECORD", None),
    ("attrs-26.1.0.dist-info/licenses/LICENSE", "attrs-26.1.0.dist-info/licenses/LICENSE"),
    ("psutil-7.2.2.dist-info/LICENSE", "psutil-7.2.2.dist-info/LICENSE"),
    ("foo-1.data/purelib/foo.py", "foo.py"),
    ("foo-1.data/scripts/foo", None),
])
def test_wheel_member_filter(member: str, expected: str) -> None:
    assert bz._wheel_target(member) == expected


def test_pins_must_be_exact(tmp_path: Path) -> None:
    req = tmp_path / "r.txt"
    req.write_text("# c\nPyYAML==6.0.3\nrpds_py == 0.27.1  # why\n")
    assert bz.read_pins(req) == {"pyyaml": "6.0.3", "rpds-py": "0.27.1"}
    req.write_text("jsonschema>=4\n")
    with pytest.raises(SystemExit):
        bz.read_pins(req)


def test_requirements_are_all_pinned() -> None:
    assert set(bz.read_pins()) >= {"pyyaml", "jsonschema", "rpds-py", "psutil", "referencing"}


