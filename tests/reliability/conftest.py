"""Shared fixtures of the reliability suite: the worst-case kernel settings, an unprivileged user."""
from __future__ import annotations

import os
import pwd
from typing import Dict, Iterator, Optional

import pytest

from ccm.locks import _pid_alive

SYSCTLS = ("/proc/sys/fs/protected_symlinks", "/proc/sys/fs/protected_regular")
# Shared by every pytest worker (``-n 2``) and run: the original values and who holds the
# worst case now. Only the last holder restores, so one worker never puts the protection
# back under another's race test; a holder that died (a killed run) is dropped, and the
# values its run saved are still the ones restored.
SYSCTL_STATE = "/run/ccm-test-sysctls.json"


def _sysctl_state(update):
    """Call ``update(state)`` under an exclusive lock on the shared state file, save it."""
    import fcntl
    import json

    fd = os.open(SYSCTL_STATE + ".lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            with open(SYSCTL_STATE) as fh:
                state = json.load(fh)
        except (OSError, ValueError):
            state = {"saved": {}, "holders": []}
        state["holders"] = [pid for pid in state["holders"] if _pid_alive(pid)]
        result = update(state)
        if state["holders"]:
            with open(SYSCTL_STATE + ".tmp", "w") as fh:
                json.dump(state, fh)
            os.rename(SYSCTL_STATE + ".tmp", SYSCTL_STATE)
        elif os.path.exists(SYSCTL_STATE):
            os.unlink(SYSCTL_STATE)
        return result
    finally:
        os.close(fd)


def _write_sysctls(values: Dict[str, str]) -> None:
    for path, value in values.items():
        with open(path, "w") as fh:
            fh.write(value)


def _enter(state) -> Optional[str]:
    if not state["holders"] and not state["saved"]:
        saved: Dict[str, str] = {}
        try:
            for path in SYSCTLS:
                with open(path) as fh:
                    saved[path] = fh.read().strip()
            _write_sysctls({path: "0" for path in SYSCTLS})
        except OSError as exc:
            try:
                _write_sysctls(saved)
            except OSError:
                pass
            return f"cannot set {SYSCTLS} to 0 here: {exc.strerror}"
        state["saved"] = saved
    else:
        _write_sysctls({path: "0" for path in SYSCTLS})
    state["holders"].append(os.getpid())
    return None


def _leave(state) -> None:
    if os.getpid() in state["holders"]:
        state["holders"].remove(os.getpid())
    if not state["holders"]:
        _write_sysctls(state["saved"])
        state["saved"] = {}


@pytest.fixture
def worst_case_sysctls() -> Iterator[Dict[str, str]]:
    """``fs.protected_symlinks`` and ``fs.protected_regular`` at 0, restored to the values
    before the first holder when the last one is done (across pytest workers)."""
    if os.geteuid() != 0:
        pytest.skip("needs root to change fs.protected_* sysctls")
    problem = _sysctl_state(_enter)
    if problem:
        pytest.skip(problem)
    try:
        yield dict(_sysctl_state(lambda state: dict(state["saved"])))
    finally:
        _sysctl_state(_leave)


@pytest.fixture
def nobody() -> pwd.struct_passwd:
    if os.geteuid() != 0:
        pytest.skip("needs root (to act as root against an unprivileged user)")
    try:
        return pwd.getpwnam("nobody")
    except KeyError:
        pytest.skip("no 'nobody' user on this host")


@pytest.fixture
def public_tmp() -> Iterator[str]:
    """A 0755 scratch directory under /tmp (pytest's own tmp_path is 0700, closed to nobody)."""
    import shutil
    import tempfile

    path = tempfile.mkdtemp(prefix="ccm-rel-", dir="/tmp")
    os.chmod(path, 0o755)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def drop_to(user: pwd.struct_passwd) -> None:
    """In a forked child: become ``user`` for good."""
    os.setgroups([])
    os.setgid(user.pw_gid)
    os.setuid(user.pw_uid)
