"""Root never reads a NATS context (server URL, credentials) another user can change (issue 24).

As root with another user's ``HOME``/``XDG_CONFIG_HOME`` (``sudo -E``), a context file, a
directory above it, a symlink on the way or a TLS file it names that belongs to that user
(or that anyone may write) is refused with one line naming the file and the reason.
"""
from __future__ import annotations

import json
import os
import subprocess

import pytest

from tests.kit import ccm
from tests.reliability.cli import cli_env
from tests.reliability.conftest import drop_to

pytestmark = pytest.mark.reliability


@pytest.fixture
def home(public_tmp, nobody):
    """A home directory with a context ``CCM`` pointing at a server nobody controls."""
    path = os.path.join(public_tmp, "home")
    ctx_dir = os.path.join(path, ".config", "nats", "context")
    os.makedirs(ctx_dir)
    with open(os.path.join(ctx_dir, "CCM.json"), "w") as fh:
        json.dump({"url": "nats://127.0.0.1:1"}, fh)
    return path


def _ctx(home: str, name: str = "CCM") -> str:
    return os.path.join(home, ".config", "nats", "context", f"{name}.json")


def _load(home: str, name: str = "CCM"):
    from ccm.nats.context import load

    return load(name, {"HOME": home})


def test_root_owned_chain_is_read(home):
    assert _load(home).servers == ["nats://127.0.0.1:1"]


@pytest.mark.parametrize("what", ["home", "config", "file"])
def test_another_users_file_or_directory_is_refused(home, nobody, what):
    from ccm.nats import NatsError

    target = {"home": home, "config": os.path.join(home, ".config"), "file": _ctx(home)}[what]
    os.chown(target, nobody.pw_uid, -1)
    with pytest.raises(NatsError) as err:
        _load(home)
    assert str(err.value) == (f'refusing nats context "CCM" ({_ctx(home)}) as root: '
                              f"{target} is owned by uid {nobody.pw_uid} (nobody), not root")


@pytest.mark.parametrize("what, mode", [("file", 0o666), ("file", 0o620), ("dir", 0o777), ("dir", 0o757)])
def test_writable_by_others_is_refused(home, what, mode):
    from ccm.nats import NatsError

    target = _ctx(home) if what == "file" else os.path.join(home, ".config", "nats")
    os.chmod(target, mode)
    with pytest.raises(NatsError, match=rf"as root: {target} is writable by .* \(mode {mode:04o}\)$"):
        _load(home)


def test_a_root_owned_sticky_directory_is_accepted(public_tmp, home):
    os.chmod(public_tmp, 0o1777)   # like /tmp: nobody else can rename root's entries in it
    assert _load(home).servers == ["nats://127.0.0.1:1"]


def test_symlinks_are_followed_only_when_roots(home, nobody):
    from ccm.nats import NatsError

    link = _ctx(home, "L")
    os.symlink(_ctx(home), link)
    assert _load(home, "L").servers == ["nats://127.0.0.1:1"]
    os.lchown(link, nobody.pw_uid, -1)
    with pytest.raises(NatsError, match=f"as root: symlink {link} is owned by uid {nobody.pw_uid}"):
        _load(home, "L")
    # a root symlink into another user's directory: the target's chain is checked too
    theirs = os.path.join(os.path.dirname(home), "theirs")
    os.makedirs(theirs)
    with open(os.path.join(theirs, "c.json"), "w") as fh:
        json.dump({"url": "nats://evil:4222"}, fh)
    os.chown(theirs, nobody.pw_uid, -1)
    os.unlink(link)
    os.symlink(os.path.join("..", "..", "..", "..", "theirs", "c.json"), link)
    with pytest.raises(NatsError, match=f"as root: {theirs} is owned by uid {nobody.pw_uid}"):
        _load(home, "L")


def test_tls_files_a_context_names_obey_the_same_rule(home, nobody):
    from ccm.nats import NatsError

    ca = os.path.join(home, "ca.pem")
    with open(ca, "w") as fh:
        fh.write("not a real CA\n")
    with open(_ctx(home), "w") as fh:
        json.dump({"url": "tls://127.0.0.1:1", "ca": ca}, fh)
    assert _load(home).ca == ca
    os.chown(ca, nobody.pw_uid, -1)
    with pytest.raises(NatsError, match=f"as root: its ca file: {ca} is owned by uid {nobody.pw_uid}"):
        _load(home)


def test_a_fifo_is_refused_without_hanging(home):
    from ccm.nats import NatsError

    os.unlink(_ctx(home))
    os.mkfifo(_ctx(home))
    with pytest.raises(NatsError, match="is not a regular file"):
        _load(home)


def test_the_cli_says_one_line_and_exits_1(home, nobody):
    os.chown(home, nobody.pw_uid, -1)
    res = ccm("hiera", "parse", "kv://CFG/data", cwd=home, env=cli_env(home, {"HOME": home, "XDG_CONFIG_HOME": None}))
    assert res.returncode == 1
    assert res.stderr == (f'ccm: error: kv://CFG/data: refusing nats context "CCM" ({_ctx(home)}) as root: '
                          f"{home} is owned by uid {nobody.pw_uid} (nobody), not root\n")


@pytest.fixture
def readable_ccm():
    """A copy of ``ccm/`` any user can import (the worktree may sit under root's 0700 home)."""
    import shutil
    import tempfile

    from tests.reliability.cli import ROOT

    dest = tempfile.mkdtemp(prefix="ccm-src-", dir="/tmp")
    try:
        shutil.copytree(os.path.join(ROOT, "ccm"), os.path.join(dest, "ccm"),
                        ignore=shutil.ignore_patterns("__pycache__"))
        for dirpath, dirs, files in os.walk(dest):
            os.chmod(dirpath, 0o755)
            for f in files:
                os.chmod(os.path.join(dirpath, f), 0o644)
        yield dest
    finally:
        shutil.rmtree(dest, ignore_errors=True)


def test_a_user_reads_their_own_context(home, nobody, readable_ccm):
    """The rule is root's: an unprivileged user still reads the context in their own home."""
    for dirpath, dirs, files in os.walk(home):
        for name in [dirpath] + [os.path.join(dirpath, f) for f in files]:
            os.chown(name, nobody.pw_uid, nobody.pw_gid)
    code = ("import sys; sys.path.insert(0, sys.argv[1]); from ccm.nats.context import load; "
            "print(load('CCM', {'HOME': sys.argv[2]}).servers[0])")
    res = subprocess.run(["/usr/bin/python3", "-c", code, readable_ccm, home], capture_output=True, text=True,
                         preexec_fn=lambda: drop_to(nobody), timeout=30)
    assert (res.returncode, res.stdout.strip()) == (0, "nats://127.0.0.1:1"), res.stderr
