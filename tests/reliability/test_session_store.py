"""Session stores on shared hosts: private modes, planted stores refused, --remove never follows."""
from __future__ import annotations

import os
import stat

import pytest

from ccm.model.errors import SessionError
from ccm.session.directory import DirectoryStore
from tests.kit import ccm
from tests.reliability.cli import cli_env, shipped_pyz
from tests.reliability.conftest import drop_to


def _apply_one(tmp_path, store: str):
    target = tmp_path / "f"
    if not os.path.lexists(store):
        res = ccm("session", "new", "--directory", store, cwd=str(tmp_path), env=cli_env(str(tmp_path)))
        assert res.returncode == 0, res.stderr
    return ccm("ensure", "file", str(target), "--content", "secret\n", "--mode", "0600", cwd=str(tmp_path),
               env=cli_env(str(tmp_path), {"CCM_SESSION_STORE": store}))


def test_store_is_0700_and_events_are_0600(tmp_path):
    store = tmp_path / "store"
    res = _apply_one(tmp_path, str(store))
    assert res.returncode == 0, res.stderr
    assert stat.S_IMODE(os.stat(store).st_mode) == 0o700
    events = [n for n in os.listdir(store) if n.endswith(".event")]
    assert events and all(stat.S_IMODE(os.stat(store / n).st_mode) == 0o600 for n in events)


def test_symlinked_store_is_refused(tmp_path):
    victim = tmp_path / "victim"
    victim.mkdir()
    (tmp_path / "store").symlink_to(victim)
    res = _apply_one(tmp_path, str(tmp_path / "store"))
    assert res.returncode != 0 and "is a symlink; refusing to use it" in res.stderr
    assert "Traceback" not in res.stderr and os.listdir(victim) == []


def test_store_owned_by_another_user_is_refused(tmp_path, nobody):
    store = tmp_path / "store"
    store.mkdir()
    os.chown(store, nobody.pw_uid, nobody.pw_gid)
    with pytest.raises(SessionError, match="belongs to uid"):
        DirectoryStore(str(store)).start_session()
    res = _apply_one(tmp_path, str(store))
    assert res.returncode != 0 and "belongs to uid" in res.stderr and os.listdir(store) == []


def test_report_remove_never_follows_a_symlink(tmp_path):
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "precious").write_text("keep\n")
    link = tmp_path / "sess"
    link.symlink_to(victim)
    res = ccm("session", "report", "--session", str(link), "--remove", cwd=str(tmp_path),
              env=cli_env(str(tmp_path), {"TMPDIR": str(tmp_path)}))
    assert res.returncode != 0 and "symlink" in res.stderr
    assert (victim / "precious").read_text() == "keep\n"


def test_report_remove_deletes_only_our_event_files(tmp_path):
    store = tmp_path / "store"
    assert _apply_one(tmp_path, str(store)).returncode == 0
    (store / "notes.txt").write_text("not an event\n")
    res = ccm("session", "report", "--session", str(store), "--remove", cwd=str(tmp_path),
              env=cli_env(str(tmp_path), {"TMPDIR": str(tmp_path)}))
    assert res.returncode == 0, res.stderr
    assert os.listdir(store) == ["notes.txt"]


def test_report_on_a_missing_directory_is_an_error(tmp_path):
    res = ccm("session", "report", "--session", str(tmp_path / "nope"), cwd=str(tmp_path), env=cli_env(str(tmp_path)))
    assert res.returncode != 0 and "does not exist" in res.stderr and "Traceback" not in res.stderr


def test_other_users_event_files_are_not_removed(tmp_path, nobody):
    store = tmp_path / "store"
    assert _apply_one(tmp_path, str(store)).returncode == 0
    planted = store / "00000000000000000001-1xxxxxxxxxxxxxxxxxxxxxxxxxx.event"
    planted.write_text("{}")
    os.chown(planted, nobody.pw_uid, nobody.pw_gid)
    DirectoryStore(str(store)).destroy()
    assert os.listdir(store) == [planted.name]


def test_stale_temp_files_are_swept_by_the_next_run(tmp_path):
    store = tmp_path / "store"
    assert _apply_one(tmp_path, str(store)).returncode == 0
    stale = store / ".x.event.ccm-0123456789ab.tmp"
    stale.write_text("torn")
    os.utime(stale, (1, 1))
    assert _apply_one(tmp_path, str(store)).returncode == 0
    assert not stale.exists()


def test_unprivileged_user_without_home(public_tmp, nobody):
    """As nobody with HOME unset: the store and event files it creates are private too."""
    from pathlib import Path

    pyz = shipped_pyz()
    work = Path(public_tmp) / "w"
    work.mkdir()
    os.chown(work, nobody.pw_uid, nobody.pw_gid)
    new = ccm("session", "new", "--directory", str(work / "store"), cwd=str(work),
              env=cli_env(str(work), {"HOME": None}, pyz=pyz), preexec_fn=lambda: drop_to(nobody), command=pyz)
    assert new.returncode == 0, new.stderr
    res = ccm("ensure", "file", str(work / "f"), "--content", "x\n", "--owner", f"nobody:{nobody.pw_gid}", "--mode", "0600", cwd=str(work), env=cli_env(str(work), {"CCM_SESSION_STORE": str(work / "store"), "HOME": None, "CCM_CACHE_DIR": None,
               "XDG_CONFIG_HOME": None}, pyz=pyz), preexec_fn=lambda: drop_to(nobody), command=pyz)
    assert res.returncode == 0, res.stderr
    assert stat.S_IMODE(os.stat(work / "store").st_mode) == 0o700
    assert stat.S_IMODE(os.stat(work / "f").st_mode) == 0o600
    for name in os.listdir(work / "store"):
        st = os.stat(work / "store" / name)
        assert stat.S_IMODE(st.st_mode) == 0o600 and st.st_uid == nobody.pw_uid
