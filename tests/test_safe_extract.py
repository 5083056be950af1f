"""ccm.safe_extract against real archives, benign and malicious, built here with tarfile/zipfile."""
from __future__ import annotations

import io
import os
import stat
import tarfile
import zipfile

import pytest

from ccm.safe_extract import ArchiveError, UnsafeArchive, archive_kind, extract


def _tar(path, entries, mode="w:gz"):
    """entries: (name, kind, payload) with kind file|dir|sym|hard|chr|blk|fifo."""
    with tarfile.open(path, mode) as tf:
        for name, kind, payload in entries:
            info = tarfile.TarInfo(name)
            data = None
            if kind == "file":
                data = payload.encode() if isinstance(payload, str) else payload
                info.size = len(data)
                info.mode = 0o644
            elif kind == "exec":
                data = payload.encode()
                info.size = len(data)
                info.mode = 0o4755  # setuid must be dropped
            elif kind == "dir":
                info.type = tarfile.DIRTYPE
                info.mode = 0o755
            elif kind == "sym":
                info.type = tarfile.SYMTYPE
                info.linkname = payload
            elif kind == "hard":
                info.type = tarfile.LNKTYPE
                info.linkname = payload
            elif kind == "chr":
                info.type = tarfile.CHRTYPE
                info.devmajor, info.devminor = 1, 3
            elif kind == "blk":
                info.type = tarfile.BLKTYPE
                info.devmajor, info.devminor = 8, 0
            elif kind == "fifo":
                info.type = tarfile.FIFOTYPE
            tf.addfile(info, io.BytesIO(data) if data is not None else None)
    return str(path)


def _zip(path, entries):
    with zipfile.ZipFile(path, "w") as zf:
        for name, kind, payload in entries:
            info = zipfile.ZipInfo(name)
            if kind == "file":
                info.external_attr = (stat.S_IFREG | 0o640) << 16
                zf.writestr(info, payload)
            elif kind == "dir":
                info.external_attr = (stat.S_IFDIR | 0o755) << 16 | 0x10
                zf.writestr(info, b"")
            elif kind == "sym":
                info.external_attr = (stat.S_IFLNK | 0o777) << 16
                zf.writestr(info, payload)
            elif kind == "fifo":
                info.external_attr = (stat.S_IFIFO | 0o644) << 16
                zf.writestr(info, b"")
    return str(path)


def _tree(root):
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        for n in dirnames + filenames:
            out.append(os.path.relpath(os.path.join(dirpath, n), root))
    return sorted(out)


@pytest.fixture
def box(tmp_path):
    """A sandbox: ``dest`` is the extraction target, everything else in ``tmp_path`` is "outside"."""
    dest = tmp_path / "box" / "dest"
    dest.mkdir(parents=True)
    return tmp_path, dest


def test_kinds():
    assert archive_kind("/a/x.TAR.GZ") == "tar.gz"
    assert archive_kind("x.tgz") == "tar.gz"
    assert archive_kind("x.tar") == "tar"
    assert archive_kind("x.Zip") == "zip"
    assert archive_kind("x.gz") is None


@pytest.mark.parametrize("mode,suffix", [("w:gz", "tar.gz"), ("w:gz", "tgz"), ("w", "tar")])
def test_tar_benign(box, mode, suffix):
    tmp, dest = box
    arc = _tar(tmp / f"a.{suffix}", [
        ("app", "dir", None), ("app/bin", "dir", None), ("app/bin/run", "exec", "#!/bin/sh\n"),
        ("app/conf.txt", "file", "hello"), ("app/current", "sym", "bin/run"),
        ("app/conf.hard", "hard", "app/conf.txt"), ("./app/lib/../lib2", "dir", None) if False else ("app/lib", "dir", None),
    ], mode=mode)
    written = extract(arc, str(dest))
    assert (dest / "app/conf.txt").read_text() == "hello"
    assert os.readlink(dest / "app/current") == "bin/run"
    assert os.stat(dest / "app/conf.hard").st_ino == os.stat(dest / "app/conf.txt").st_ino
    assert stat.S_IMODE(os.stat(dest / "app/bin/run").st_mode) == 0o755  # setuid dropped
    assert str(dest / "app/conf.txt") in written


def test_zip_benign_with_modes_and_internal_symlink(box):
    tmp, dest = box
    arc = _zip(tmp / "a.zip", [("d/", "dir", None), ("d/f.txt", "file", b"zipdata"), ("d/l", "sym", b"f.txt")])
    extract(arc, str(dest))
    assert (dest / "d/f.txt").read_bytes() == b"zipdata"
    assert stat.S_IMODE(os.stat(dest / "d/f.txt").st_mode) == 0o640
    assert os.readlink(dest / "d/l") == "f.txt"


def test_creates_missing_destination(tmp_path):
    arc = _tar(tmp_path / "a.tgz", [("f", "file", "x")])
    extract(arc, str(tmp_path / "new" / "deep"))
    assert (tmp_path / "new/deep/f").read_text() == "x"


def test_overwrites_existing_and_replaces_symlink_without_following(box):
    tmp, dest = box
    victim = tmp / "victim"
    victim.write_text("original")
    os.symlink(str(victim), dest / "f")
    (dest / "g").write_text("old")
    arc = _tar(tmp / "a.tgz", [("f", "file", "new"), ("g", "file", "new-g")])
    extract(arc, str(dest))
    assert victim.read_text() == "original"
    assert not os.path.islink(dest / "f") and (dest / "f").read_text() == "new"
    assert (dest / "g").read_text() == "new-g"


def test_chowns_when_asked(box):
    tmp, dest = box
    if os.geteuid() != 0:
        pytest.skip("chown to another user needs root")
    arc = _tar(tmp / "a.tgz", [("d", "dir", None), ("d/f", "file", "x"), ("d/l", "sym", "f")])
    extract(arc, str(dest), uid=1, gid=1)
    for p in ("d", "d/f"):
        st = os.stat(dest / p)
        assert (st.st_uid, st.st_gid) == (1, 1)
    assert os.lstat(dest / "d/l").st_uid == 1


MALICIOUS_TAR = {
    "dotdot": [("ok.txt", "file", "fine"), ("../evil", "file", "pwned")],
    "dotdot_nested": [("ok.txt", "file", "fine"), ("a/../../evil", "file", "pwned")],
    "absolute": [("ok.txt", "file", "fine"), ("/tmp/ccm-abs-evil", "file", "pwned")],
    "symlink_etc": [("ok.txt", "file", "fine"), ("etc", "sym", "/etc")],
    "symlink_relative_escape": [("ok.txt", "file", "fine"), ("up", "sym", "../../evil")],
    "symlink_then_write": [("ok.txt", "file", "fine"), ("esc", "sym", ".."), ("esc/evil", "file", "pwned")],
    "symlink_chain": [("ok.txt", "file", "fine"), ("a", "sym", "."), ("c", "sym", "a/.."), ("c/evil", "file", "x")],
    "hardlink_outside": [("ok.txt", "file", "fine"), ("h", "hard", "../evil")],
    "hardlink_absolute": [("ok.txt", "file", "fine"), ("h", "hard", "/etc/passwd")],
    "hardlink_not_a_member": [("ok.txt", "file", "fine"), ("h", "hard", "elsewhere")],
    "char_device": [("ok.txt", "file", "fine"), ("null", "chr", None)],
    "block_device": [("ok.txt", "file", "fine"), ("sda", "blk", None)],
    "fifo": [("ok.txt", "file", "fine"), ("pipe", "fifo", None)],
}


@pytest.mark.parametrize("case", sorted(MALICIOUS_TAR))
def test_malicious_tar_writes_nothing(box, case):
    tmp, dest = box
    arc = _tar(tmp / "evil.tar.gz", MALICIOUS_TAR[case])
    before_outside = _tree(tmp)
    with pytest.raises(UnsafeArchive):
        extract(arc, str(dest))
    assert _tree(dest) == []  # validated before writing: not even ok.txt
    assert _tree(tmp) == before_outside
    assert not os.path.exists("/tmp/ccm-abs-evil")


@pytest.mark.parametrize("entries", [
    [("ok", "file", b"x"), ("../evil", "file", b"pwned")],
    [("ok", "file", b"x"), ("/abs-evil", "file", b"pwned")],
    [("ok", "file", b"x"), ("etc", "sym", b"/etc")],
    [("ok", "file", b"x"), ("up", "sym", b"../../x")],
    [("ok", "file", b"x"), ("p", "fifo", None)],
], ids=["dotdot", "absolute", "symlink_etc", "symlink_up", "fifo"])
def test_malicious_zip_writes_nothing(box, entries):
    tmp, dest = box
    arc = _zip(tmp / "evil.zip", entries)
    before = _tree(tmp)
    with pytest.raises(UnsafeArchive):
        extract(arc, str(dest))
    assert _tree(dest) == []
    assert _tree(tmp) == before


def test_existing_symlink_in_destination_is_not_written_through(box):
    tmp, dest = box
    outside = tmp / "outside"
    outside.mkdir()
    os.symlink(str(outside), dest / "link")
    arc = _tar(tmp / "a.tgz", [("link/evil", "file", "pwned")])
    with pytest.raises(UnsafeArchive):
        extract(arc, str(dest))
    assert list(outside.iterdir()) == []


def test_allow_links_false_refuses_links(box):
    tmp, dest = box
    arc = _tar(tmp / "a.tgz", [("f", "file", "x"), ("l", "sym", "f")])
    with pytest.raises(UnsafeArchive, match="only regular files and directories"):
        extract(arc, str(dest), allow_links=False)
    assert _tree(dest) == []


def test_corrupt_archive(box):
    tmp, dest = box
    bad = tmp / "bad.tar.gz"
    bad.write_bytes(b"this is not gzip")
    with pytest.raises(ArchiveError):
        extract(str(bad), str(dest))
    badzip = tmp / "bad.zip"
    badzip.write_bytes(b"PK nope")
    with pytest.raises(ArchiveError):
        extract(str(badzip), str(dest))
