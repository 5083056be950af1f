"""Hostile archives: bombs, too many entries, lying sizes, failures half-way. Nothing lands."""
from __future__ import annotations

import hashlib
import io
import os
import tarfile
import time
import zipfile

import pytest

from ccm import safe_extract
from ccm.safe_extract import ArchiveError, Limits, UnsafeArchive


def tree_digest(root) -> str:
    h = hashlib.sha256()
    for dirpath, dirnames, filenames in sorted(os.walk(root)):
        dirnames.sort()
        for name in sorted(filenames + dirnames):
            p = os.path.join(dirpath, name)
            st = os.lstat(p)
            h.update(f"{os.path.relpath(p, root)}:{st.st_mode}:{st.st_size}".encode())
            if os.path.isfile(p) and not os.path.islink(p):
                with open(p, "rb") as fh:
                    h.update(fh.read())
    return h.hexdigest()


class _Zeros(io.RawIOBase):
    def __init__(self, n: int):
        self.left = n

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        n = min(len(b), self.left)
        b[:n] = b"\0" * n
        self.left -= n
        return n


def _tgz(path, entries):
    with tarfile.open(path, "w:gz", compresslevel=1) as tf:
        for name, size in entries:
            info = tarfile.TarInfo(name)
            info.size = size
            tf.addfile(info, io.BufferedReader(_Zeros(size)))


@pytest.fixture
def dest(tmp_path):
    d = tmp_path / "dest"
    d.mkdir()
    (d / "existing").write_text("keep me\n")
    (d / "dir").mkdir()
    (d / "dir" / "inside").write_text("x\n")
    return d


def test_tar_gz_bomb_is_refused_while_streaming(tmp_path, dest):
    bomb = tmp_path / "bomb.tar.gz"
    _tgz(bomb, [("zero.bin", 160 << 20)])
    assert bomb.stat().st_size < 1 << 20
    before = tree_digest(dest)
    start = time.monotonic()
    with pytest.raises(UnsafeArchive, match="expands more than 200 times"):
        safe_extract.extract(str(bomb), str(dest))
    assert time.monotonic() - start < 30
    assert tree_digest(dest) == before


def test_zip_bomb_is_refused(tmp_path, dest):
    bomb = tmp_path / "bomb.zip"
    with zipfile.ZipFile(bomb, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        with zf.open("zero.bin", "w", force_zip64=True) as out:
            for _ in range(100):
                out.write(b"\0" * (1 << 20))
    before = tree_digest(dest)
    with pytest.raises(UnsafeArchive, match="expands more than 200 times"):
        safe_extract.extract(str(bomb), str(dest))
    assert tree_digest(dest) == before


def test_total_size_and_entry_limits_are_per_call(tmp_path, dest):
    arc = tmp_path / "many.tar.gz"
    _tgz(arc, [(f"f{i}", 10) for i in range(20)])
    before = tree_digest(dest)
    with pytest.raises(UnsafeArchive, match="more than 10 entries"):
        safe_extract.extract(str(arc), str(dest), limits=Limits(max_entries=10))
    with pytest.raises(UnsafeArchive, match="declares 200 bytes, more than the limit of 100"):
        safe_extract.extract(str(arc), str(dest), limits=Limits(max_bytes=100))
    assert tree_digest(dest) == before
    safe_extract.extract(str(arc), str(dest))
    assert (dest / "f19").stat().st_size == 10


def test_failure_half_way_leaves_nothing_behind(tmp_path, dest):
    arc = tmp_path / "overlong.tar.gz"
    _tgz(arc, [("a-first-file", 5), ("x" * 300, 5)])
    before = tree_digest(dest)
    with pytest.raises(ArchiveError):
        safe_extract.extract(str(arc), str(dest))
    assert tree_digest(dest) == before and not [n for n in os.listdir(dest) if n.startswith(".ccm-extract-")]


def test_file_replacing_a_directory_fails_before_anything_moves(tmp_path, dest):
    arc = tmp_path / "replace.tar.gz"
    _tgz(arc, [("new-file", 5), ("dir", 5)])
    before = tree_digest(dest)
    with pytest.raises(ArchiveError, match="cannot replace directory"):
        safe_extract.extract(str(arc), str(dest))
    assert tree_digest(dest) == before


def test_stale_staging_directories_are_swept(tmp_path, dest):
    stale = dest / ".ccm-extract-abc123"
    stale.mkdir()
    (stale / "junk").write_text("x")
    os.utime(stale, (1, 1))
    arc = tmp_path / "ok.tar.gz"
    _tgz(arc, [("f", 1)])
    safe_extract.extract(str(arc), str(dest))
    assert not stale.exists() and (dest / "f").exists()


def _tar(path, entries):
    """``entries``: (kind, name, data-or-link-target) with kind f (file), d (dir), l (symlink)."""
    with tarfile.open(path, "w") as tf:
        for kind, name, extra in entries:
            info = tarfile.TarInfo(name)
            if kind == "f":
                info.size = len(extra)
                tf.addfile(info, io.BytesIO(extra))
                continue
            info.type, info.mode = (tarfile.DIRTYPE, 0o755) if kind == "d" else (tarfile.SYMTYPE, 0o777)
            info.linkname = extra if kind == "l" else ""
            tf.addfile(info)


def _kinds(root):
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = os.path.join(dirpath, name)
            out[os.path.relpath(p, root)] = "l" if os.path.islink(p) else "d" if os.path.isdir(p) else "f"
    return out


@pytest.mark.parametrize("entries,expected", [
    ([("f", "x", b"file\n"), ("d", "x", ""), ("f", "x/y", b"y\n")], {"x": "d", "x/y": "f"}),   # issue 24: ENOENT
    ([("l", "x", "../outside"), ("d", "x", ""), ("f", "x/y", b"y\n")], {"x": "d", "x/y": "f"}),  # link replaced
    ([("d", "x", ""), ("f", "x", b"file\n")], {"x": "f"}),          # an empty directory replaced by a file
    ([("f", "x", b"one\n"), ("f", "x", b"two\n")], {"x": "f"}),      # the last one wins
    ([("f", "x", b"file\n"), ("l", "x", "y")], {"x": "l"}),
], ids=["file-then-dir", "link-then-dir", "dir-then-file", "file-twice", "file-then-link"])
def test_a_later_entry_replaces_an_earlier_one_as_gnu_tar_does(tmp_path, entries, expected):
    arc = tmp_path / "a.tar"
    _tar(arc, entries)
    dest = tmp_path / "dest"
    (tmp_path / "outside").mkdir()
    safe_extract.extract(str(arc), str(dest))
    assert os.listdir(tmp_path / "outside") == [], "written outside the destination"
    assert _kinds(dest) == expected
    if expected["x"] == "f":
        assert (dest / "x").read_bytes() == [e for e in entries if e[0] == "f"][-1][2]
    tar = "/bin/tar" if os.access("/bin/tar", os.X_OK) else None
    if tar:   # the reference: what GNU tar leaves
        import subprocess

        ref = tmp_path / "ref"
        ref.mkdir()
        subprocess.run([tar, "-C", str(ref), "-xf", str(arc)], capture_output=True)
        assert _kinds(ref) == expected


@pytest.mark.parametrize("entries,message", [
    ([("d", "x", ""), ("f", "x/y", b"y\n"), ("f", "x", b"file\n")], "would replace the directory 'x'"),
    ([("f", "x", b"file\n"), ("f", "x/y", b"y\n")], "lies below 'x', which the archive makes a file"),
    ([("l", "x", "sub"), ("f", "x/y", b"y\n")], "lies below 'x', which the archive makes a symlink"),
])
def test_entries_tar_cannot_extract_are_refused_before_anything_lands(tmp_path, dest, entries, message):
    arc = tmp_path / "a.tar"
    _tar(arc, entries)
    before = tree_digest(dest)
    with pytest.raises(UnsafeArchive, match=message):
        safe_extract.extract(str(arc), str(dest))
    assert tree_digest(dest) == before


def test_zip_file_then_directory_of_the_same_name(tmp_path):
    arc = tmp_path / "a.zip"
    with zipfile.ZipFile(arc, "w") as zf:
        zf.writestr("x", b"file\n")
        zf.writestr("x/", b"")
        zf.writestr("x/y", b"y\n")
    dest = tmp_path / "dest"
    safe_extract.extract(str(arc), str(dest))
    assert _kinds(dest) == {"x": "d", "x/y": "f"} and (dest / "x" / "y").read_bytes() == b"y\n"
