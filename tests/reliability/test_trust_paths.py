"""Paths root accepts from the environment and the command line, attacked by another user.

The attacker is ``nobody`` (a forked child that drops to it), with ``fs.protected_symlinks``
and ``fs.protected_regular`` at 0: a session store anyone can write (forged events that
would trigger a ``subscribe``), event files another user slipped into root's store, a
shared ``CCM_LOCK_DIR`` (``/run/lock``-like, 1777) and one whose ``ccm`` entry the attacker
planted, and a ``--last-run`` path through the attacker's symlink into a root-only
directory. Root must refuse with one line or ignore what it does not trust, run nothing
on forged input, and never change what it did not create.
"""
from __future__ import annotations

import json
import os
import stat
import time

import pytest

from tests.kit import ccm
from tests.reliability.cli import cli_env
from tests.reliability.conftest import drop_to

pytestmark = pytest.mark.reliability


def as_user(user, action) -> None:
    """Run ``action()`` in a child process that is ``user`` for good; fail on its failure."""
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            drop_to(user)
            action()
            code = 0
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, "the attacker's step failed"


def _subscriber(work: str) -> str:
    """A manifest whose refreshonly exec runs when the session store says file#/etc/forged changed."""
    path = os.path.join(work, "m.yaml")
    with open(path, "w") as fh:
        fh.write(f"""ccm:
  resources:
    - exec:
        - /bin/touch {work}/ran:
            refreshonly: true
            subscribe: ["file#/etc/forged"]
""")
    return path


def _forged_event() -> bytes:
    """A 'changed' file#/etc/forged event, as a real run writes one."""
    from ccm.model.events import TransactionEvent

    event = TransactionEvent(type="file", name="/etc/forged", provider="posix", requested_ensure="present",
                             final_ensure="present")
    event.changed = True
    return json.dumps(event.to_dict()).encode()


def _plant(store: str, data: bytes) -> str:
    name = f"{time.time_ns():020d}-{json.loads(data)['event_id']}.event"
    with open(os.path.join(store, name), "wb") as fh:
        fh.write(data)
    return name


@pytest.fixture
def work(public_tmp, nobody, worst_case_sysctls):
    return public_tmp


def test_root_refuses_a_session_store_anyone_can_write(work, nobody):
    """Issue 24: a root-owned 1777 store was used; nobody's forged "changed" event made
    root's refreshonly exec run and counted in the summary."""
    store = os.path.join(work, "store")
    assert ccm("session", "new", "--directory", store, cwd=work, env=cli_env(work)).returncode == 0
    os.chmod(store, 0o1777)
    as_user(nobody, lambda: _plant(store, _forged_event()))
    res = ccm("apply", _subscriber(work), cwd=work, env=cli_env(work, {"CCM_SESSION_STORE": store}))
    assert res.returncode != 0, res.stdout
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "writable by group or others" in lines[0] and store in lines[0], res.stderr
    assert not os.path.exists(os.path.join(work, "ran")), "root ran a command on a forged event"
    assert stat.S_IMODE(os.stat(store).st_mode) == 0o1777   # refused, not "fixed"


@pytest.mark.parametrize("mode", [0o770, 0o702])
def test_a_group_or_other_writable_store_is_refused_by_root(work, mode):
    store = os.path.join(work, "store")
    assert ccm("session", "new", "--directory", store, cwd=work, env=cli_env(work)).returncode == 0
    os.chmod(store, mode)
    res = ccm("session", "report", "--session", store, cwd=work, env=cli_env(work))
    assert res.returncode != 0 and "writable by group or others" in res.stderr and "Traceback" not in res.stderr


def test_event_files_of_another_user_are_ignored(work, nobody):
    """A forged event inside root's private store (planted while it was open, or as a
    hardlink): never read, so no refresh and not in the summary."""
    store = os.path.join(work, "store")
    assert ccm("session", "new", "--directory", store, cwd=work, env=cli_env(work)).returncode == 0
    name = _plant(store, _forged_event())
    os.chown(os.path.join(store, name), nobody.pw_uid, nobody.pw_gid)
    res = ccm("apply", _subscriber(work), cwd=work, env=cli_env(work, {"CCM_SESSION_STORE": store}))
    assert not os.path.exists(os.path.join(work, "ran")), "root ran a command on another user's event"
    assert "Ignoring session event owned by another user" in res.stderr and "Traceback" not in res.stderr
    # the reference is checked against what the store holds: nothing names file#/etc/forged
    assert res.returncode != 0 and "'file#/etc/forged' names a resource not declared" in res.stderr
    report = ccm("session", "report", "--session", store, "--json", cwd=work, env=cli_env(work))
    assert report.returncode == 0, report.stderr
    names = [e["name"] for e in json.loads(report.stdout)["events"]]
    assert names == [], names   # the forged event is not counted (the rejected run recorded nothing)


def _apply_with_lock_dir(work: str, lock_dir: str):
    manifest = os.path.join(work, "touch.yaml")
    with open(manifest, "w") as fh:
        fh.write(f"ccm:\n  resources:\n    - exec:\n        - /bin/touch {work}/applied: {{}}\n")
    return ccm("apply", manifest, cwd=work, env=cli_env(work, {"CCM_LOCK_DIR": lock_dir}))


def test_a_shared_lock_dir_keeps_its_mode_and_gets_a_private_subdirectory(work, nobody):
    """Issue 24: CCM_LOCK_DIR=/run/lock (1777) was chmodded to 1755, taking everyone
    else's right to create files there."""
    shared = os.path.join(work, "lock")
    os.mkdir(shared)
    os.chmod(shared, 0o1777)
    res = _apply_with_lock_dir(work, shared)
    assert res.returncode == 0, res.stdout + res.stderr
    assert stat.S_IMODE(os.stat(shared).st_mode) == 0o1777
    private = os.path.join(shared, "ccm")
    st = os.lstat(private)
    assert stat.S_ISDIR(st.st_mode) and st.st_uid == 0 and stat.S_IMODE(st.st_mode) == 0o700
    assert os.path.isfile(os.path.join(private, "ccm-run.lock"))
    as_user(nobody, lambda: open(os.path.join(shared, "nobody-was-here"), "w").close())


@pytest.mark.parametrize("planted", ["directory", "symlink"])
def test_a_planted_ccm_entry_in_a_shared_lock_dir_is_refused(work, nobody, planted):
    shared = os.path.join(work, "lock")
    os.mkdir(shared)
    os.chmod(shared, 0o777)   # not even sticky: the attacker may rename entries too
    theirs = os.path.join(work, "theirs")
    os.mkdir(theirs)
    os.chown(theirs, nobody.pw_uid, nobody.pw_gid)
    entry = os.path.join(shared, "ccm")
    as_user(nobody, (lambda: os.mkdir(entry, 0o777)) if planted == "directory" else (lambda: os.symlink(theirs, entry)))
    res = _apply_with_lock_dir(work, shared)
    assert res.returncode != 0
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "refusing lock directory" in lines[0] and "Traceback" not in res.stderr, res.stderr
    assert not os.path.exists(os.path.join(work, "applied"))
    assert os.listdir(theirs) == [] and (planted == "symlink" or os.listdir(entry) == [])


def test_a_lock_dir_of_another_user_is_refused(work, nobody):
    theirs = os.path.join(work, "theirs")
    os.mkdir(theirs)
    os.chmod(theirs, 0o777)
    os.chown(theirs, nobody.pw_uid, nobody.pw_gid)
    res = _apply_with_lock_dir(work, theirs)
    assert res.returncode != 0 and "refusing lock directory" in res.stderr and "owned by uid" in res.stderr
    assert os.listdir(theirs) == []


def test_last_run_parents_are_not_made_through_another_users_symlink(work, nobody, tmp_path):
    """Issue 24: --last-run DIR/new/file ran os.makedirs through nobody's symlink, creating
    a directory inside a root-only 0700 directory before the safe write refused."""
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    pub = os.path.join(work, "pub")
    os.mkdir(pub)
    os.chown(pub, nobody.pw_uid, nobody.pw_gid)
    as_user(nobody, lambda: os.symlink(str(private), os.path.join(pub, "link")))
    manifest = os.path.join(work, "ok.yaml")
    with open(manifest, "w") as fh:
        fh.write("ccm:\n  resources:\n    - exec:\n        - /bin/true: {}\n")
    target = os.path.join(pub, "link", "new", "last.json")
    res = ccm("apply", manifest, "--last-run", target, cwd=work, env=cli_env(work))
    assert res.returncode != 0
    assert f"cannot write --last-run {target}" in res.stderr and "refusing to follow symlink" in res.stderr
    assert "Traceback" not in res.stderr
    assert os.listdir(private) == [], "root created a directory through another user's symlink"


def test_last_run_still_creates_missing_parents(work):
    manifest = os.path.join(work, "ok.yaml")
    with open(manifest, "w") as fh:
        fh.write("ccm:\n  resources:\n    - exec:\n        - /bin/true: {}\n")
    target = os.path.join(work, "state", "deep", "last.json")
    res = ccm("apply", manifest, "--last-run", target, cwd=work, env=cli_env(work))
    assert res.returncode == 0, res.stderr
    assert json.loads(open(target).read())["exit_code"] == 0
    assert stat.S_IMODE(os.stat(os.path.dirname(target)).st_mode) == 0o755
