"""Permissions of everything ccm creates: as root, and as an unprivileged user without HOME.

Runs with ``fs.protected_symlinks``/``fs.protected_regular`` at 0 (the worst case). One
manifest creates a file, a directory, a downloaded archive and its extracted tree, a
metrics file and session events; every path is then checked for owner and mode: nothing
group/world-writable unless asked for, no setuid/setgid bits, the store 0700, events 0600,
no temp file left.
"""
from __future__ import annotations

import io
import os
import stat
import tarfile

import pytest

from tests.httpfixture import Server
from tests.kit import ccm
from tests.reliability.cli import cli_env, shipped_pyz
from tests.reliability.conftest import drop_to


def _bundle() -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for name, mode, data in (("app/bin/run", 0o4777, b"#!/bin/sh\n"), ("app/etc/conf", 0o666, b"a=1\n")):
            info = tarfile.TarInfo(name)
            info.mode = mode
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
        d = tarfile.TarInfo("app/shared")
        d.type = tarfile.DIRTYPE
        d.mode = 0o2777
        tf.addfile(d)
    return buf.getvalue()


def _manifest(work: str, url: str, owner: str, group: str) -> str:
    return f"""ccm:
  resources:
    - file:
        - {work}/out/secret:
            ensure: present
            content: "s3cret"
            owner: "{owner}"
            group: "{group}"
            mode: "0600"
        - {work}/out/dir:
            ensure: directory
            owner: "{owner}"
            group: "{group}"
            mode: "0750"
    - archive:
        - {work}/out/app.tar.gz:
            ensure: present
            url: {url}
            extract_parent: {work}/out/x
            creates: {work}/out/x/app
            owner: "{owner}"
            group: "{group}"
"""


def _check_tree(work: str, uid: int) -> None:
    expect = {"secret": 0o600, "dir": 0o750, "app.tar.gz": 0o644}
    for dirpath, dirnames, filenames in os.walk(work):
        if dirpath == work:   # the test's own m.yaml; ccm's output is below out/ and store/
            dirnames[:] = [d for d in dirnames if d in ("out", "store")]
            filenames = []
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            st = os.lstat(path)
            rel = os.path.relpath(path, work)
            assert ".ccm-" not in name and not name.endswith(".tmp"), f"temp file left: {rel}"
            assert st.st_uid == uid, f"{rel} belongs to {st.st_uid}"
            assert not st.st_mode & (stat.S_ISUID | stat.S_ISGID), f"{rel} has set-id bits"
            if name in expect:
                assert stat.S_IMODE(st.st_mode) == expect[name], f"{rel} is {stat.S_IMODE(st.st_mode):o}"
            if rel.startswith("store"):
                want = 0o700 if stat.S_ISDIR(st.st_mode) else 0o600
                assert stat.S_IMODE(st.st_mode) == want, f"{rel} is {stat.S_IMODE(st.st_mode):o}"


def _run(work, server, owner, group, *, as_user=None):
    (work / "m.yaml").write_text(_manifest(str(work), server.url("/app.tar.gz"), owner, group))
    (work / "out").mkdir()
    if as_user is not None:
        os.chown(work / "out", as_user.pw_uid, as_user.pw_gid)
    env = {"HOME": None, "XDG_CONFIG_HOME": None, "XDG_CACHE_HOME": None, "CCM_CACHE_DIR": None}
    kw = {}
    if as_user is not None:
        kw = {"preexec_fn": lambda: drop_to(as_user), "command": shipped_pyz()}
    new = ccm("session", "new", "--directory", str(work / "store"), cwd=str(work),
              env=cli_env(str(work), env, pyz=kw.get("command")), **kw)
    assert new.returncode == 0, new.stderr
    env["CCM_SESSION_STORE"] = str(work / "store")
    res = ccm("apply", "m.yaml", "--metrics-file", str(work / "out" / "ccm.prom"), cwd=str(work),
              env=cli_env(str(work), env, pyz=kw.get("command")), **kw)
    assert res.returncode == 0, res.stdout + res.stderr
    assert (work / "out" / "x" / "app" / "etc" / "conf").exists()
    return res


@pytest.fixture
def server():
    with Server() as srv:
        srv.route("/app.tar.gz", body=_bundle())
        yield srv


def test_as_root(tmp_path, server, worst_case_sysctls):
    if os.geteuid() != 0:
        pytest.skip("needs root")
    work = tmp_path / "w"
    work.mkdir()
    _run(work, server, "root", "root")
    _check_tree(str(work), 0)


def test_as_nobody_without_home(public_tmp, server, nobody, worst_case_sysctls):
    from pathlib import Path

    work = Path(public_tmp) / "w"
    work.mkdir()
    os.chown(work, nobody.pw_uid, nobody.pw_gid)
    _run(work, server, "nobody", str(nobody.pw_gid), as_user=nobody)
    _check_tree(str(work), nobody.pw_uid)
