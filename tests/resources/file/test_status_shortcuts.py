"""The file type's shortcuts on a steady run (issue 16: remembered mode texts and names,
one metadata literal, a shared stable plan) give what the plain steps give."""
from __future__ import annotations

import grp
import hashlib
import os
import pwd
import stat

import pytest

from ccm.model.errors import ValidationError
from ccm.model.events import rfc3339
from ccm.model.resource import Plan, Properties
from ccm.registry import TypeSpec
from ccm.resources.file import TYPE
from ccm.resources.file.logic import FileLogic, desired_mode, desired_mode_text
from ccm.resources.file.posix import PosixFileProvider
from ccm.resources.ownership import clear_id_cache, format_mode


def _props(**values) -> Properties:
    spec: TypeSpec = TYPE
    return Properties("file", dict(values), spec.fields)


def _name(lookup, key: int) -> str:
    try:
        return str(lookup(key)[0])
    except KeyError:
        return str(key)


def _plain_metadata(path: str):
    """The documented metadata of ``path``, step by step (name, checksum, owner, group,
    mode, provider, mtime, size, extended)."""
    st = os.stat(path)
    meta = {"name": path}
    if stat.S_ISREG(st.st_mode):
        with open(path, "rb") as fh:
            meta["checksum"] = hashlib.sha256(fh.read()).hexdigest()
    meta["owner"] = _name(pwd.getpwuid, st.st_uid)
    meta["group"] = _name(grp.getgrgid, st.st_gid)
    meta["mode"] = f"{st.st_mode & 0o777:04o}"
    meta["provider"] = "posix"
    meta["mtime"] = rfc3339(st.st_mtime_ns)
    if st.st_size:
        meta["size"] = st.st_size
    meta["extended"] = {}
    return meta


@pytest.mark.parametrize("kind", ["content", "empty", "directory", "fifo", "other owner"])
def test_status_metadata_is_the_plain_one_in_the_documented_order(tmp_path, kind):
    path = tmp_path / "f"
    if kind == "directory":
        path.mkdir()
        os.chmod(path, 0o751)
    elif kind == "fifo":
        os.mkfifo(path, 0o600)
    else:
        path.write_bytes(b"" if kind == "empty" else b"setting = 1\n")
        os.chmod(path, 0o640)
        if kind == "other owner" and os.getuid() == 0:
            os.chown(path, 65534, 65534)
    provider = PosixFileProvider()
    want = _plain_metadata(str(path))
    for _ in range(2):   # the second time from remembered names and mode texts
        for args in ((), (b"setting = 1\n", hashlib.sha256(b"setting = 1\n").hexdigest())):
            state = provider.status(str(path), *args)
            assert list(state.metadata.items()) == list(want.items())
            assert state.ensure == ("directory" if kind == "directory" else "present")
            assert (state.type, state.name) == ("file", str(path))
        clear_id_cache()


MODES = ["0644", "644", "0o755", "0O600", "0", "777", 644, 0o644, 600, "0400", " 644 "]


@pytest.mark.parametrize("ensure", ["present", "directory"])
def test_desired_mode_text_is_the_formatted_desired_mode(ensure):
    for _ in range(2):
        for mode in MODES:
            props = _props(name="/x", ensure=ensure, mode=mode)
            assert desired_mode_text(props) == format_mode(desired_mode(props)), mode


@pytest.mark.parametrize("mode", [True, "abc", "1000", ["644"], None])
def test_desired_mode_text_rejects_what_desired_mode_rejects(mode):
    props = _props(name="/x", ensure="present", mode=mode)
    with pytest.raises(ValidationError) as plain:
        desired_mode(props)
    for _ in range(2):
        with pytest.raises(ValidationError) as remembered:
            desired_mode_text(props)
        assert str(remembered.value) == str(plain.value)


def test_a_stable_plan_equals_a_fresh_empty_plan(tmp_path):
    path = tmp_path / "f"
    path.write_text("a\n")
    os.chmod(path, 0o644)
    me, mine = pwd.getpwuid(os.getuid()).pw_name, grp.getgrgid(os.getgid()).gr_name
    props = _props(name=str(path), ensure="present", content="a\n", owner=me, group=mine, mode="0644")
    logic = FileLogic()
    plans = []
    for _ in range(2):
        state = logic.status(PosixFileProvider(), props, _Ctx())
        plans.append(logic.plan(props, state))
    assert plans[0] == Plan() == plans[1]
    assert plans[0].stable and plans[0].params == {} and not plans[0].refresh


class _Ctx:
    noop = False
    working_dir = None


@pytest.mark.parametrize("owner,group,mode,reason", [
    (str(os.getuid()), str(os.getgid()), "0644", ""),
    (str(os.getuid() + 1), str(os.getgid()), "0644", "owner mismatch: state={me} requested={uid1}"),
    (str(os.getuid()), str(os.getgid() + 1), "0644", "group mismatch: state={mine} requested={gid1}"),
    ("no-such-user-ccm", str(os.getgid()), "0644", "owner mismatch: state={me} requested=no-such-user-ccm"),
    (str(os.getuid()), str(os.getgid()), "0600", "mode mismatch: state=0644 requested=0600"),
    (str(os.getuid()), str(os.getgid()), 420, "mode mismatch: state=0644 requested=0420"),
])
def test_is_desired_answers_the_same_when_asked_again(tmp_path, owner, group, mode, reason):
    path = tmp_path / "f"
    path.write_text("a\n")
    os.chmod(path, 0o644)
    me, mine = pwd.getpwuid(os.getuid()).pw_name, grp.getgrgid(os.getgid()).gr_name
    want = (not reason, reason.format(me=me, mine=mine, uid1=os.getuid() + 1, gid1=os.getgid() + 1))
    props = _props(name=str(path), ensure="present", content="a\n", owner=owner, group=group, mode=mode)
    logic = FileLogic()
    for _ in range(3):   # the later rounds from remembered answers
        state = logic.status(PosixFileProvider(), props, _Ctx())
        assert logic.is_desired(props, state) == want
    clear_id_cache()
