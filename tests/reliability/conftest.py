"""Shared fixtures of the reliability suite: the worst-case kernel settings, an unprivileged user."""
from __future__ import annotations

import os
import pwd
from typing import Dict, Iterator

import pytest

SYSCTLS = ("/proc/sys/fs/protected_symlinks", "/proc/sys/fs/protected_regular")


@pytest.fixture
def worst_case_sysctls() -> Iterator[Dict[str, str]]:
    """``fs.protected_symlinks`` and ``fs.protected_regular`` at 0, restored afterwards."""
    saved: Dict[str, str] = {}
    for path in SYSCTLS:
        try:
            with open(path) as fh:
                saved[path] = fh.read().strip()
            with open(path, "w") as fh:
                fh.write("0")
        except OSError as exc:
            for done, value in saved.items():
                try:
                    with open(done, "w") as fh:
                        fh.write(value)
                except OSError:
                    pass
            pytest.skip(f"cannot set {path} to 0 here: {exc.strerror}")
    try:
        yield saved
    finally:
        for path, value in saved.items():
            with open(path, "w") as fh:
                fh.write(value)


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
