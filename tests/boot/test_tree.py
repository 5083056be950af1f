"""An unpacked tree: the marker that tells a complete tree from a damaged one, and pruning."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from pyzboot import boot

REPO = Path(__file__).resolve().parents[2]


def _tree(root: Path) -> Path:
    site = root / "site-packages"
    (site / "pkg" / "sub").mkdir(parents=True)
    (site / "pkg" / "__init__.py").write_text("")
    (site / "pkg" / "sub" / "data.json").write_text("{}")
    (site / "mod.py").write_text("")
    return site


def test_marker_detects_deleted_file(tmp_path: Path) -> None:
    site = _tree(tmp_path)
    assert not boot.extraction_ok(str(tmp_path))
    boot.write_marker(str(tmp_path))
    assert (site / "pkg" / "__pycache__").is_dir() and (site / "__pycache__").is_dir()
    assert not (site / "pkg" / "sub" / "__pycache__").exists()
    assert boot.extraction_ok(str(tmp_path))
    (site / "pkg" / "__pycache__" / "x.cpython-39.pyc").write_bytes(b"")  # Python's own write
    assert boot.extraction_ok(str(tmp_path))
    os.utime(site / "pkg" / "sub", ns=(1, 1))
    assert not boot.extraction_ok(str(tmp_path))
    boot.write_marker(str(tmp_path))
    (site / "pkg" / "sub" / "data.json").unlink()
    assert not boot.extraction_ok(str(tmp_path))


def test_marker_survives_cleaner_restoring_mtime(tmp_path: Path) -> None:
    """systemd-tmpfiles puts a directory's atime/mtime back after deleting in it."""
    site = _tree(tmp_path)
    boot.write_marker(str(tmp_path))
    st = (site / "pkg").stat()
    (site / "pkg" / "__init__.py").unlink()
    os.utime(site / "pkg", ns=(st.st_atime_ns, st.st_mtime_ns))
    assert (site / "pkg").stat().st_mtime_ns == st.st_mtime_ns
    assert not boot.extraction_ok(str(tmp_path))


def test_marker_detects_deleted_directory(tmp_path: Path) -> None:
    site = _tree(tmp_path)
    boot.write_marker(str(tmp_path))
    import shutil

    shutil.rmtree(site / "pkg")
    assert not boot.extraction_ok(str(tmp_path))


def _build_tree(root: Path, name: str, mtime_ns: int) -> Path:
    target = root / name
    _tree(target)
    boot.write_marker(str(target))
    os.utime(target / boot.MARKER, ns=(mtime_ns, mtime_ns))
    return target


def test_prune_keeps_current_and_newest_other(tmp_path: Path) -> None:
    ids = ["ccm_" + c * 64 for c in "abcd"]
    trees = [_build_tree(tmp_path, name, (i + 1) * 10**18) for i, name in enumerate(ids)]
    foreign = tmp_path / "ccm_other"  # not a build dir name: never touched
    foreign.mkdir()
    boot.prune(str(tmp_path), ids[0])  # the oldest is current (a rollback)
    assert [t.exists() for t in trees] == [True, False, False, True]
    assert foreign.is_dir()
    assert not [n for n in os.listdir(tmp_path) if ".stale-" in n]


def test_prune_skips_a_tree_in_use(tmp_path: Path) -> None:
    ids = ["ccm_" + c * 64 for c in "abc"]
    trees = [_build_tree(tmp_path, name, (i + 1) * 10**18) for i, name in enumerate(ids)]
    # another process runs from the oldest tree: it holds the shared in-use lock
    holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(REPO)!r})
        from pyzboot import stub
        assert stub.hold({str(trees[0])!r}) is not None
        print("held", flush=True)
        sys.stdin.read()
        """)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        boot.prune(str(tmp_path), ids[2])
        assert [t.exists() for t in trees] == [True, True, True]
    finally:
        holder.communicate("")
    boot.prune(str(tmp_path), ids[2])
    assert [t.exists() for t in trees] == [False, True, True]


