"""Bounded races on the paths root trusts: a session store and a lock directory swapped.

``nobody`` owns nothing root uses, but may write the (non-sticky, world-writable) parent,
so it swaps root's entry for its own between root's check and use, in a tight loop
(``renameat2(RENAME_EXCHANGE)``, symlinks, its own directories), with
``fs.protected_symlinks=0``. Root must never read a forged event (no refresh), never create
a file in the attacker's directory, and fail only with its own clear errors. Trials:
``CCM_RACE_TRIALS`` (``make test-reliability-ci`` runs a bounded number, ``make
test-reliability`` the full one).
"""
from __future__ import annotations

import ctypes
import json
import os
import shutil
import signal
import stat
import tempfile
import time

import pytest

from ccm.model.errors import LockTimeout, SessionError
from tests.reliability.conftest import drop_to

pytestmark = pytest.mark.reliability

TRIALS = int(os.environ.get("CCM_RACE_TRIALS", "300"))
_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def _exchange_call():
    libc = ctypes.CDLL(None, use_errno=True)
    fn = getattr(libc, "renameat2", None)
    if fn is None:
        pytest.skip("no renameat2 in this libc")
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    return fn


@pytest.fixture
def arena(nobody, worst_case_sysctls):
    base = tempfile.mkdtemp(prefix="ccm-trust-race-", dir="/tmp")
    os.chmod(base, 0o755)
    shared = os.path.join(base, "shared")
    os.mkdir(shared)
    os.chmod(shared, 0o777)   # not sticky: the attacker may rename root's entries here
    theirs = os.path.join(base, "theirs")
    os.mkdir(theirs)
    os.chmod(theirs, 0o777)
    os.chown(theirs, nobody.pw_uid, nobody.pw_gid)
    yield base, shared, theirs, nobody
    shutil.rmtree(base, ignore_errors=True)


def _start(user, loop) -> int:
    pid = os.fork()
    if pid == 0:
        try:
            drop_to(user)
            loop()
        finally:
            os._exit(0)
    time.sleep(0.05)
    return pid


def _stop(pid: int) -> None:
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)


def test_session_store_swapped_for_a_forged_one(arena):
    base, shared, theirs, nobody = arena
    from ccm.model.events import TransactionEvent
    from ccm.session.directory import DirectoryStore

    store = os.path.join(shared, "store")
    DirectoryStore(store).start_session()
    fake = os.path.join(shared, "fake")
    forged = TransactionEvent(type="file", name="/etc/forged", provider="posix", requested_ensure="present")
    forged.changed = True
    event = json.dumps(forged.to_dict())
    exchange = _exchange_call()

    def attacker() -> None:
        os.mkdir(fake, 0o700)   # with mode 0700 it would pass the mode check; the owner is nobody
        with open(os.path.join(fake, f"{time.time_ns():020d}-{forged.event_id}.event"), "w") as fh:
            fh.write(event)
        a, b = os.fsencode(store), os.fsencode(fake)
        while True:
            exchange(_AT_FDCWD, a, _AT_FDCWD, b, _RENAME_EXCHANGE)

    pid = _start(nobody, attacker)
    refreshed = refused = 0
    try:
        for _ in range(TRIALS):
            try:
                refreshed += DirectoryStore(store).should_refresh(["file#/etc/forged"])
            except SessionError as exc:
                assert "no events found" in str(exc) or "belongs to uid" in str(exc), exc
                refused += 1
    finally:
        _stop(pid)
    assert refreshed == 0, "root refreshed on a forged event"
    assert refused == TRIALS


def test_lock_directory_entry_swapped_under_root(arena):
    base, shared, theirs, nobody = arena
    from ccm.locks import GlobalLock

    entry = os.path.join(shared, "ccm")

    def attacker() -> None:
        i = 0
        while True:
            i += 1
            for step in (lambda: os.rename(entry, os.path.join(shared, f"away{i}")),  # noqa: B023 (called in the loop)
                         lambda: os.symlink(theirs, entry), lambda: os.unlink(entry),
                         lambda: os.mkdir(entry, 0o700), lambda: os.rmdir(entry)):
                try:
                    step()
                except OSError:
                    pass

    pid = _start(nobody, attacker)
    taken = refused = 0
    try:
        for i in range(TRIALS):
            lock = GlobalLock(f"race{i}", directory=shared, timeout=0)
            try:
                lock.acquire()
            except LockTimeout as exc:   # LockDirectoryError is one: a clear refusal
                assert "lock" in str(exc), exc
                refused += 1
                continue
            lock.release()
            taken += 1
    finally:
        _stop(pid)
    assert os.listdir(theirs) == [], "root created a file in the attacker's directory"
    assert taken + refused == TRIALS
    for dirpath, _dirs, files in os.walk(base):
        for name in files:
            if name.startswith("ccm-race"):
                st = os.lstat(dirpath)
                assert st.st_uid == 0 and stat.S_IMODE(st.st_mode) == 0o700, dirpath
