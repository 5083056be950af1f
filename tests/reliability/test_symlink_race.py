"""Root managing paths in a directory another user can write, while that user swaps symlinks in.

The attacker is a real unprivileged process (``nobody`` via ``setuid`` in a forked child),
racing root's provider calls with ``fs.protected_symlinks=0``. Root's protected directory
must keep its owner and 0700 mode whatever the interleaving.
"""
from __future__ import annotations

import os
import shutil
import signal
import stat
import tempfile
import time

import pytest

from ccm.model.errors import ProviderError
from ccm.resources.file.posix import PosixFileProvider
from tests.reliability.conftest import drop_to

TRIALS = 40


def _attacker(target: str, victim: str) -> None:
    while True:
        try:
            os.rmdir(target)
        except OSError:
            try:
                os.unlink(target)
            except OSError:
                pass
        try:
            os.symlink(victim, target)
        except OSError:
            pass


@pytest.fixture
def arena(nobody, worst_case_sysctls):
    base = tempfile.mkdtemp(prefix="ccm-race-", dir="/tmp")
    os.chmod(base, 0o755)
    shared = os.path.join(base, "shared")
    os.mkdir(shared)
    os.chmod(shared, 0o1777)          # sticky, world-writable: like /tmp
    owned = os.path.join(base, "owned")
    os.mkdir(owned)
    os.chown(owned, nobody.pw_uid, nobody.pw_gid)   # a directory the attacker owns
    victim = os.path.join(base, "victim")
    os.mkdir(victim, 0o700)
    os.chmod(victim, 0o700)
    with open(os.path.join(victim, "secret"), "w") as fh:
        fh.write("root only\n")
    os.chmod(os.path.join(victim, "secret"), 0o600)
    yield base, shared, owned, victim, nobody
    shutil.rmtree(base, ignore_errors=True)


def _race(parent: str, victim: str, user, action) -> int:
    target = os.path.join(parent, "managed")
    changed = 0
    for _ in range(TRIALS):
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the attacker child
            try:
                drop_to(user)
                _attacker(target, victim)
            finally:
                os._exit(0)
        try:
            deadline = time.monotonic() + 0.05
            while time.monotonic() < deadline:
                try:
                    action(target)
                except ProviderError:
                    pass
        finally:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        st = os.stat(victim)
        sst = os.stat(os.path.join(victim, "secret"))
        if stat.S_IMODE(st.st_mode) != 0o700 or st.st_uid != 0 or stat.S_IMODE(sst.st_mode) != 0o600:
            changed += 1
            os.chmod(victim, 0o700)
            os.chown(victim, 0, 0)
            os.chmod(os.path.join(victim, "secret"), 0o600)
    return changed


@pytest.mark.parametrize("where", ["shared", "owned"])
def test_directory_race_never_changes_the_symlink_target(arena, where):
    base, shared, owned, victim, user = arena
    provider = PosixFileProvider()
    parent = shared if where == "shared" else owned
    hits = _race(parent, victim, user, lambda t: provider.create_directory(t, 0o777, "root", "root"))
    assert hits == 0, f"{hits}/{TRIALS} trials changed root's directory through a swapped symlink"


@pytest.mark.parametrize("where", ["shared", "owned"])
def test_attribute_race_never_changes_the_symlink_target(arena, where):
    base, shared, owned, victim, user = arena
    provider = PosixFileProvider()
    parent = shared if where == "shared" else owned

    def action(target: str) -> None:
        try:
            provider.set_attributes(target, "root", "root", 0o777)
        finally:
            try:
                provider.store(target + "x", content=b"x", source=None, owner="root", group="root", mode=0o666)
            except ProviderError:
                pass
    hits = _race(parent, victim, user, action)
    assert hits == 0


def test_untrusted_symlinked_parent_is_refused(arena):
    base, shared, owned, victim, user = arena
    link = os.path.join(shared, "via")
    pid = os.fork()
    if pid == 0:  # pragma: no cover
        try:
            drop_to(user)
            os.symlink(victim, link)
        finally:
            os._exit(0)
    os.waitpid(pid, 0)
    with pytest.raises(ProviderError) as err:
        PosixFileProvider().store(os.path.join(link, "secret"), content=b"owned\n", source=None,
                                  owner="root", group="root", mode=0o644)
    assert "refusing to follow symlink" in str(err.value)
    with open(os.path.join(victim, "secret")) as fh:
        assert fh.read() == "root only\n"
