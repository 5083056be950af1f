"""Bounded document reads (``ccm.readfile``): the limit holds to the byte, and a read
allocates about the file's size, not the limit."""
from __future__ import annotations

import tracemalloc

import pytest

from ccm.readfile import ReadError, read_bytes


def test_a_file_at_the_limit_reads_and_one_byte_more_does_not(tmp_path):
    path = tmp_path / "doc"
    path.write_bytes(b"x" * 100)
    assert read_bytes(str(path), "manifest", limit=100) == b"x" * 100
    path.write_bytes(b"x" * 101)
    with pytest.raises(ReadError) as err:
        read_bytes(str(path), "manifest", limit=100)
    assert "larger than the limit of 100 bytes" in str(err.value)


def test_a_small_read_does_not_allocate_the_limit(tmp_path):
    path = tmp_path / "doc"
    path.write_bytes(b"a: 1\n")
    tracemalloc.start()
    try:
        assert read_bytes(str(path), "manifest") == b"a: 1\n"   # default limit: 64 MiB
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20
