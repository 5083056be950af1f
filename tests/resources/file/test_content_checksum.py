"""A file's checksum when its status compares it with the desired bytes instead of hashing
it: every outcome equals a plain sha256 of what the file holds."""
from __future__ import annotations

import hashlib
import os

import pytest

from ccm.model.errors import ValidationError
from ccm.resources.file.posix import PosixFileProvider
from ccm.resources.ownership import parse_mode, sha256_file


def _hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


DESIRED = [b"", b"x", b"setting = 1\n", bytes(range(256)) * 300, b"a" * (1 << 16), b"b" * ((1 << 16) + 1)]


@pytest.mark.parametrize("desired", DESIRED, ids=lambda d: f"{len(d)}B")
@pytest.mark.parametrize("change", ["same", "last byte", "first byte", "shorter", "longer", "empty"])
def test_sha256_file_with_expected_bytes_is_the_plain_digest(tmp_path, desired, change):
    have = {"same": desired,
            "last byte": desired[:-1] + b"?" if desired else b"?",
            "first byte": b"?" + desired[1:],
            "shorter": desired[:-1],
            "longer": desired + b"!",
            "empty": b""}[change]
    path = tmp_path / "f"
    path.write_bytes(have)
    size = os.stat(path).st_size
    got = sha256_file(str(path), size=size, expect=desired, expect_sha256=_hex(desired))
    assert got == _hex(have)
    assert sha256_file(str(path)) == _hex(have)
    assert sha256_file(str(path), size=size) == _hex(have)


def test_a_file_that_changed_since_its_stat_is_hashed_as_read(tmp_path):
    """``size`` from an earlier stat: the bytes read decide, never the stale size."""
    desired = b"new content\n"
    path = tmp_path / "f"
    path.write_bytes(desired + b"appended later")
    got = sha256_file(str(path), size=len(desired), expect=desired, expect_sha256=_hex(desired))
    assert got == _hex(desired + b"appended later")
    path.write_bytes(desired[:4])
    got = sha256_file(str(path), size=len(desired), expect=desired, expect_sha256=_hex(desired))
    assert got == _hex(desired[:4])


def test_the_given_digest_is_trusted_only_for_equal_bytes(tmp_path):
    path = tmp_path / "f"
    path.write_bytes(b"abc")
    assert sha256_file(str(path), size=3, expect=b"abc", expect_sha256="given") == "given"
    assert sha256_file(str(path), size=3, expect=b"abd", expect_sha256="given") == _hex(b"abc")


@pytest.mark.parametrize("have", [b"setting = 1\n", b"other\n", b""])
def test_provider_status_is_the_same_with_or_without_the_desired_bytes(tmp_path, have):
    path = tmp_path / "f"
    path.write_bytes(have)
    desired = b"setting = 1\n"
    plain = PosixFileProvider().status(str(path))
    fast = PosixFileProvider().status(str(path), desired, _hex(desired))
    assert fast.to_dict() | {"timestamp": ""} == plain.to_dict() | {"timestamp": ""}
    assert fast.metadata["checksum"] == _hex(have)


def test_parse_mode_remembers_valid_modes_only(tmp_path):
    assert parse_mode("0644") == parse_mode("644") == parse_mode(644) == parse_mode("0o644") == 0o644
    assert parse_mode(1) == 1
    for bad in (True, "0999", "08", "", 0o1777, ["0644"]):
        with pytest.raises((ValidationError, TypeError)):
            parse_mode(bad)
    with pytest.raises(ValidationError) as exc:
        parse_mode(True, field="dir_mode")
    assert exc.value.field == "dir_mode"
