"""The worst-case sysctl fixture under several pytest workers: only the last holder restores.

Before, each test saved and restored the values on its own: with ``-n 2`` one worker could
save the 0 another had set and "restore" it last, leaving ``fs.protected_symlinks=0`` on
the host after ``make test-reliability``, or put the protection back under another
worker's race test. Exercised on stand-in files, never on the real ``/proc/sys``.
"""
from __future__ import annotations

import os

from tests.reliability import conftest


def _values(paths):
    return [open(p).read().strip() for p in paths]


def test_overlapping_holders_restore_once_at_the_end(tmp_path, monkeypatch):
    paths = (str(tmp_path / "protected_symlinks"), str(tmp_path / "protected_regular"))
    for path, value in zip(paths, ("1", "2")):
        with open(path, "w") as fh:
            fh.write(value + "\n")
    monkeypatch.setattr(conftest, "SYSCTLS", paths)
    monkeypatch.setattr(conftest, "SYSCTL_STATE", str(tmp_path / "state.json"))
    read, write = os.pipe()
    go_read, go_write = os.pipe()
    pid = os.fork()
    if pid == 0:   # the other worker: holds first, leaves after the parent did
        code = 1
        try:
            assert conftest._sysctl_state(conftest._enter) is None
            os.write(write, b"x")
            os.read(go_read, 1)
            conftest._sysctl_state(conftest._leave)
            code = 0
        finally:
            os._exit(code)
    os.read(read, 1)
    assert _values(paths) == ["0", "0"]
    assert conftest._sysctl_state(conftest._enter) is None   # saves nothing new: the originals stay
    conftest._sysctl_state(conftest._leave)
    assert _values(paths) == ["0", "0"], "restored under the other worker's test"
    os.write(go_write, b"x")
    _, status = os.waitpid(pid, 0)
    assert os.WEXITSTATUS(status) == 0
    assert _values(paths) == ["1", "2"] and not os.path.exists(tmp_path / "state.json")


def test_a_dead_holder_does_not_keep_the_worst_case_forever(tmp_path, monkeypatch):
    paths = (str(tmp_path / "a"), str(tmp_path / "b"))
    for path in paths:
        with open(path, "w") as fh:
            fh.write("1\n")
    monkeypatch.setattr(conftest, "SYSCTLS", paths)
    monkeypatch.setattr(conftest, "SYSCTL_STATE", str(tmp_path / "state.json"))
    pid = os.fork()
    if pid == 0:   # a run killed while holding: never leaves
        conftest._sysctl_state(conftest._enter)
        os._exit(0)
    os.waitpid(pid, 0)
    assert _values(paths) == ["0", "0"]
    conftest._sysctl_state(conftest._enter)
    conftest._sysctl_state(conftest._leave)
    assert _values(paths) == ["1", "1"]   # the values saved before the killed run
