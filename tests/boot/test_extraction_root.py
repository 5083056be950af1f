"""The extraction root: the order of candidates, and the trust rule with one test per reason a
root is refused.

Rule (``chain_problem``): the root and every directory above it, each lstat'ed, owned by root
or the euid and writable by neither group nor others; a sticky directory others may write only
on the way to one of ours. Refused candidates are skipped (SHIV_ROOT: one clear line), and
nothing is created in a directory that fails the rule.
"""
from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from pyzboot import boot, stub

NOBODY = 65534
IS_ROOT = os.geteuid() == 0
needs_root = pytest.mark.skipif(not IS_ROOT, reason="needs root to make directories of another uid")


def _dir(path: Path, mode: int = 0o755, uid: int = -1) -> Path:
    path.mkdir()
    os.chmod(path, mode)
    if uid >= 0:
        os.chown(path, uid, uid)
    return path


def _refused(root: Path, reason: str, **kw) -> None:
    with pytest.raises(boot.BootError) as err:
        boot.probe(str(root), "ccm_x", **kw)
    assert str(err.value) == reason


# --------------------------------------------------------------------------- candidates

def test_home_shiv_first(tmp_path: Path) -> None:
    home = _dir(tmp_path / "home", 0o700)
    target = boot.choose_target({"HOME": str(home), "TMPDIR": str(tmp_path)}, "ccm_x")
    assert target == str(home / ".shiv" / "ccm_x")
    assert (home / ".shiv").is_dir()


def test_missing_home_not_created(tmp_path: Path) -> None:
    tmp = _dir(tmp_path / "t", 0o700)
    target = boot.choose_target({"HOME": str(tmp_path / "nohome"), "TMPDIR": str(tmp)}, "ccm_x")
    assert target == str(tmp / ("ccm-%d" % os.geteuid()) / "ccm_x")
    assert not (tmp_path / "nohome").exists()


def test_explicit_root_error_is_one_line() -> None:
    with pytest.raises(boot.BootError) as err:
        boot.choose_target({"SHIV_ROOT": "/proc/nope/deeper"}, "ccm_x")
    assert "SHIV_ROOT=/proc/nope/deeper" in str(err.value) and "\n" not in str(err.value)


# --------------------------------------------------------------------------- refusals

@needs_root
def test_a_directory_of_another_user_on_the_way_is_refused_and_nothing_is_made_in_it(tmp_path):
    home = _dir(tmp_path / "home", 0o755, NOBODY)
    _refused(home / ".shiv", f"{home} is owned by uid {NOBODY}")
    assert os.listdir(home) == []


@needs_root
def test_a_root_of_another_user_is_refused(tmp_path):
    _refused(_dir(tmp_path / "ccm-0", 0o700, NOBODY), f"{tmp_path / 'ccm-0'} is owned by uid {NOBODY}")


@pytest.mark.parametrize("mode", [0o777, 0o775, 0o757])
def test_a_directory_others_may_write_on_the_way_is_refused(tmp_path, mode):
    shared = _dir(tmp_path / "shared", mode)
    _refused(shared / "ccm-0", f"{shared} is writable by others")
    assert os.listdir(shared) == []


@pytest.mark.parametrize("mode", [0o777, 0o770, 0o1777])
def test_a_root_others_may_write_is_refused_even_sticky(tmp_path, mode):
    root = _dir(tmp_path / "ccm-0", mode)
    _refused(root, f"{root} is writable by others")


def test_a_symlink_on_the_way_is_refused(tmp_path):
    real = _dir(tmp_path / "real")
    (tmp_path / "link").symlink_to(real)
    _refused(tmp_path / "link" / "ccm-0", f"{tmp_path / 'link'} is a symlink")
    assert os.listdir(real) == []


def test_a_symlinked_root_is_refused_even_as_shiv_root(tmp_path):
    real = _dir(tmp_path / "real", 0o700)
    (tmp_path / "link").symlink_to(real)
    _refused(tmp_path / "link", f"{tmp_path / 'link'} is a symlink")
    _refused(tmp_path / "link", f"{tmp_path / 'link'} is a symlink", explicit=True)


def test_a_file_on_the_way_is_refused(tmp_path):
    (tmp_path / "home").write_text("")
    _refused(tmp_path / "home" / ".shiv", f"{tmp_path / 'home'} is not a directory")


def test_a_missing_home_is_never_made_but_a_missing_shiv_root_is(tmp_path):
    _refused(tmp_path / "nohome" / ".shiv", f"{tmp_path / 'nohome'}: No such file or directory")
    assert not (tmp_path / "nohome").exists()
    target = boot.probe(str(tmp_path / "a" / "b"), "ccm_x", explicit=True)
    assert target == str(tmp_path / "a" / "b" / "ccm_x")
    assert stat.S_IMODE((tmp_path / "a").stat().st_mode) & stub.SHARED == 0
    assert stat.S_IMODE((tmp_path / "a" / "b").stat().st_mode) == 0o700


# --------------------------------------------------------------------------- sticky directories

def test_our_private_directory_in_a_sticky_shared_one_is_accepted(tmp_path):
    tmp = _dir(tmp_path / "tmp", 0o1777)
    assert boot.probe(str(tmp / "ccm-0"), "ccm_x") == str(tmp / "ccm-0" / "ccm_x")
    st = (tmp / "ccm-0").lstat()
    assert st.st_uid == os.geteuid() and stat.S_IMODE(st.st_mode) == 0o700


@needs_root
def test_a_planted_directory_in_a_sticky_one_is_refused_not_reused(tmp_path):
    tmp = _dir(tmp_path / "tmp", 0o1777)
    _dir(tmp / "ccm-0", 0o700, NOBODY)   # made by another user before our first run
    _refused(tmp / "ccm-0", f"{tmp / 'ccm-0'} is owned by uid {NOBODY}")


@needs_root
def test_a_sticky_directory_of_another_user_is_refused(tmp_path):
    tmp = _dir(tmp_path / "tmp", 0o1777, NOBODY)   # its owner may rename any entry
    _refused(tmp / "ccm-0", f"{tmp} is owned by uid {NOBODY}")


def test_a_shared_directory_after_a_sticky_one_is_refused(tmp_path):
    outer = _dir(tmp_path / "tmp", 0o1777)
    inner = _dir(outer / "shared", 0o1777)
    _refused(inner / "ccm-0", f"{inner} is writable by others")


# --------------------------------------------------------------------------- the warm path, fallback

def _valid_tree(root: Path, build_id: str) -> Path:
    site = root / ("ccm_" + build_id) / "site-packages" / "pkg"
    site.mkdir(parents=True)
    (site / "__init__.py").write_text("")
    boot.write_marker(str(site.parent.parent))
    return site.parent.parent


@needs_root
def test_the_warm_path_refuses_a_complete_tree_under_another_users_directory(tmp_path, monkeypatch):
    build_id = "e" * 64
    monkeypatch.setattr(stub, "BUILD_ID", build_id)
    home = _dir(tmp_path / "home", 0o755)
    shiv = _dir(home / ".shiv", 0o700)
    _valid_tree(shiv, build_id)
    assert stub._fast_target({"HOME": str(home)}) == str(shiv / ("ccm_" + build_id))
    os.chown(home, NOBODY, NOBODY)   # root's own tree, in a directory another user may rename in
    assert stub._fast_target({"HOME": str(home)}) is None
    assert stub._fast_target({"SHIV_ROOT": str(shiv)}) is None


def test_a_tree_with_a_directory_others_may_write_is_not_complete(tmp_path):
    tree = _valid_tree(_dir(tmp_path / "root", 0o700), "d" * 64)
    assert stub.extraction_ok(str(tree))
    os.chmod(tree / "site-packages" / "pkg", 0o777)
    assert not stub.extraction_ok(str(tree))
    boot.write_marker(str(tree))   # an unpack takes the write bits away again
    assert stat.S_IMODE((tree / "site-packages" / "pkg").stat().st_mode) == 0o755
    assert stub.extraction_ok(str(tree))
    os.chmod(tree, 0o777)
    assert not stub.extraction_ok(str(tree))


@needs_root
def test_a_refused_home_falls_back_and_all_refused_is_one_line_naming_each(tmp_path, monkeypatch):
    home = _dir(tmp_path / "home", 0o755, NOBODY)
    tmp = _dir(tmp_path / "tmp", 0o700)
    env = {"HOME": str(home), "TMPDIR": str(tmp)}
    assert boot.choose_target(env, "ccm_x") == str(tmp / "ccm-0" / "ccm_x")
    shared = _dir(tmp_path / "shared", 0o777)
    monkeypatch.setattr(stub, "SYSTEM_TMP", ())   # /var/tmp, /tmp and /dev/shm would do
    with pytest.raises(boot.BootError) as err:
        boot.choose_target({"HOME": str(home), "TMPDIR": str(shared)}, "ccm_x")
    message = str(err.value)
    assert "\n" not in message and message.startswith("no usable directory to unpack into: ")
    assert f"{home}/.shiv ({home} is owned by uid {NOBODY})" in message
    assert f"{shared}/ccm-0 ({shared} is writable by others)" in message
    assert os.listdir(home) == [] and os.listdir(shared) == []


def test_shiv_root_that_fails_the_rule_is_one_clear_line(tmp_path):
    shared = _dir(tmp_path / "shared", 0o777)
    with pytest.raises(boot.BootError) as err:
        boot.choose_target({"SHIV_ROOT": str(shared / "root")}, "ccm_x")
    assert str(err.value).startswith(f"SHIV_ROOT={shared}/root is not usable ({shared} is writable by others); ")
    assert os.listdir(shared) == []
