"""file type: pure decisions, then the posix provider on real files."""
from __future__ import annotations

import grp
import os
import pwd
import stat

import pytest

from types import SimpleNamespace

from ccm.model.errors import ResourceError, ValidationError
from ccm.registry import default_registry
from ccm.resources import properties as P
from ccm.resources.file.logic import FileLogic
from ccm.resources.file.observation import FileObservation
from tests import kit

ME = pwd.getpwuid(os.getuid()).pw_name
MYGROUP = grp.getgrgid(os.getgid()).gr_name
SPEC = default_registry().spec("file")


def props(**values):
    values.setdefault("owner", ME)
    values.setdefault("group", MYGROUP)
    values.setdefault("mode", "0644")
    p = P.build(SPEC, values)
    P.validate(SPEC, p)
    return p


OTHER_ID = 54321   # the id of a user and group named "nobody-else"


def observed(ensure, owner=ME, group=MYGROUP, mode="0644", checksum=None, desired_sum=""):
    """What status would report for ``/x``, its owner and group given by name, the desired
    ones (``props``' default, ``ME``/``MYGROUP``) looked up as the provider does."""
    st = None
    if ensure != "absent":
        kind = stat.S_IFDIR if ensure == "directory" else stat.S_IFREG
        st = SimpleNamespace(st_mode=kind | int(mode, 8), st_uid=os.getuid() if owner == ME else OTHER_ID,
                             st_gid=os.getgid() if group == MYGROUP else OTHER_ID, st_size=1, st_mtime_ns=1)
    return FileObservation("/x", ensure, 1, st, owner if st else "", group if st else "", checksum, False, None,
                           desired_sum, os.getuid(), os.getgid())


# --- pure logic ------------------------------------------------------------------------

@pytest.mark.parametrize("want,have,meta,actions,message", [
    ({"ensure": "directory", "mode": "0755"}, "absent", {}, ("mkdir",), "would create directory"),
    ({"ensure": "directory", "mode": "0644"}, "directory", {"mode": "0755"}, (), ""),  # +x rule
    ({"ensure": "absent"}, "present", {}, ("remove",), "would remove"),
    ({"ensure": "absent"}, "directory", {}, ("remove",), "would remove the directory"),
    ({"ensure": "absent", "force": True}, "directory", {}, ("remove",), "would remove the directory recursively"),
    ({"ensure": "absent"}, "absent", {}, (), ""),
    ({"ensure": "present"}, "present", {}, (), ""),   # attribute-only, attributes right
    ({"ensure": "present"}, "present", {"mode": "0600"}, ("attributes",), "would change mode 0600 -> 0644"),
    ({"ensure": "present"}, "absent", {}, ("store",), "would create an empty file"),
    ({"ensure": "present", "content": "x"}, "absent", {}, ("store",), "would create"),
    ({"ensure": "present", "mode": "644"}, "present", {"mode": "0644"}, (), ""),  # "644" == "0644"
])
def test_plan_table(want, have, meta, actions, message):
    p = props(name="/x", **want)
    plan = FileLogic().plan(p, observed(have, **meta))
    assert plan.actions == actions
    assert plan.noop_message == message


def test_plan_refuses_to_replace_directory_with_file():
    with pytest.raises(ResourceError, match="exists as a directory"):
        FileLogic().plan(props(name="/x", ensure="present", content="x"), observed("directory", mode="0755"))


@pytest.mark.parametrize("meta,reason", [
    ({"checksum": "old"}, "content checksum mismatch: state=old requested=new"),
    ({"checksum": "new", "owner": "nobody-else"}, "owner mismatch: state=nobody-else requested=" + ME),
    ({"checksum": "new", "mode": "0600"}, "mode mismatch: state=0600 requested=0644"),
])
def test_is_desired_reasons(meta, reason):
    p = props(name="/x", ensure="present", content="x")
    assert FileLogic().is_desired(p, observed("present", desired_sum="new", **meta)) == (False, reason)


@pytest.mark.parametrize("values,message", [
    ({"name": "relative/path", "ensure": "present"}, "file path must be absolute"),
    ({"name": "/a/../b", "ensure": "present"}, "file path must be canonical"),
    ({"name": "/a", "ensure": "sideways"}, "invalid ensure value"),
    ({"name": "/a", "ensure": "present", "mode": "0999"}, "is not a valid octal number"),
    ({"name": "/a", "ensure": "present", "mode": "7777"}, "exceeds maximum value 0777"),
    ({"name": "/a", "ensure": "present", "force": True}, "'force: true' is only valid with 'ensure: absent'"),
    ({"name": "/a", "ensure": "present", "content": "x", "source": "/etc/hosts"}, "mutually exclusive"),
    ({"name": "/a", "ensure": "present", "owner": ""}, "owner cannot be empty"),
])
def test_validation(values, message):
    with pytest.raises(ValidationError, match=message) as exc:
        props(**values)
    assert "file#" in str(exc.value)


# --- real files ---------------------------------------------------------------------------

def apply(mgr, **values):
    ev = mgr.apply_resource(props(**values))
    mgr.record(ev)
    return ev


def test_content_file_lifecycle(tmp_path):
    mgr = kit.manager(log_level=None, working_dir=str(tmp_path))
    target = tmp_path / "motd"
    ev = apply(mgr, name=str(target), ensure="present", content="hello {{ Data.who ?? 'world' }}\n", mode="640")
    assert not ev.failed and ev.changed, ev.errors
    assert target.read_text() == "hello world\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert ev.status.metadata["mode"] == "0640"
    ev = apply(mgr, name=str(target), ensure="present", content="hello {{ Data.who ?? 'world' }}\n", mode="0640")
    assert not ev.changed and not ev.failed, "644-style and 0644-style modes must converge"
    target.write_text("tampered")
    ev = apply(mgr, name=str(target), ensure="present", content="hello {{ Data.who ?? 'world' }}\n", mode="0640")
    assert ev.changed and target.read_text() == "hello world\n"
    assert [p.name for p in tmp_path.iterdir()] == ["motd"], "no temp files left behind"
    ev = apply(mgr, name=str(target), ensure="absent")
    assert ev.changed and not target.exists()


def test_noop_changes_nothing(tmp_path):
    mgr = kit.manager(log_level=None, noop=True)
    target = tmp_path / "f"
    ev = apply(mgr, name=str(target), ensure="present", content="x")
    assert ev.changed and ev.noop and ev.noop_message == "would create"
    assert not target.exists()


def test_source_relative_to_working_dir(tmp_path):
    (tmp_path / "files").mkdir()
    (tmp_path / "files" / "src.txt").write_bytes(b"\x00binary\xff")
    mgr = kit.manager(log_level=None, working_dir=str(tmp_path))
    target = tmp_path / "out.bin"
    ev = apply(mgr, name=str(target), ensure="present", source="files/src.txt")
    assert not ev.failed, ev.errors
    assert target.read_bytes() == b"\x00binary\xff"
    ev = apply(mgr, name=str(target), ensure="present", source="files/src.txt")
    assert not ev.changed
    ev = apply(mgr, name=str(tmp_path / "other"), ensure="present", source="files/missing.txt")
    assert ev.failed and "cannot read source" in ev.errors[0] and "missing.txt" in ev.errors[0]


def test_directory_execute_bits_and_attribute_only(tmp_path):
    mgr = kit.manager(log_level=None)
    d = tmp_path / "d"
    ev = apply(mgr, name=str(d), ensure="directory", mode="0640")
    assert not ev.failed and stat.S_IMODE(d.stat().st_mode) == 0o750
    f = d / "keep"
    f.write_text("existing content")
    os.chmod(f, 0o600)
    ev = apply(mgr, name=str(f), ensure="present", mode="0644")
    assert ev.changed and f.read_text() == "existing content"
    assert stat.S_IMODE(f.stat().st_mode) == 0o644
    new = d / "empty"
    ev = apply(mgr, name=str(new), ensure="present")
    assert ev.changed and new.read_text() == ""


def test_numeric_owner_matches_name(tmp_path):
    mgr = kit.manager(log_level=None)
    f = tmp_path / "f"
    apply(mgr, name=str(f), ensure="present", content="a", owner=str(os.getuid()), group=str(os.getgid()))
    ev = apply(mgr, name=str(f), ensure="present", content="a")
    assert not ev.changed and not ev.failed


def test_unknown_owner_fails_at_run_time(tmp_path):
    mgr = kit.manager(log_level=None)
    f = tmp_path / "f"
    ev = apply(mgr, name=str(f), ensure="present", content="a", owner="no-such-user-ccm")
    assert ev.failed and 'could not lookup user "no-such-user-ccm": no such user' in ev.errors[0]
    assert not f.exists()


def test_directory_removal_needs_force(tmp_path):
    mgr = kit.manager(log_level=None)
    d = tmp_path / "d"
    (d / "sub").mkdir(parents=True)
    ev = apply(mgr, name=str(d), ensure="absent")
    assert ev.failed and "set 'force: true'" in ev.errors[0]
    ev = apply(mgr, name=str(d), ensure="absent", force=True)
    assert not ev.failed and not d.exists()


def test_symlinks_not_followed_for_attributes(tmp_path):
    mgr = kit.manager(log_level=None)
    real = tmp_path / "real"
    real.write_text("x")
    os.chmod(real, 0o600)
    link = tmp_path / "link"
    link.symlink_to(real)
    ev = apply(mgr, name=str(link), ensure="present", mode="0644")
    assert ev.failed and "refusing to set attributes through it" in ev.errors[0]
    assert stat.S_IMODE(real.stat().st_mode) == 0o600
    # storing content replaces the link itself, the target is untouched
    ev = apply(mgr, name=str(link), ensure="present", content="new", mode="0644")
    assert not ev.failed, ev.errors
    assert not link.is_symlink() and link.read_text() == "new" and real.read_text() == "x"


def test_deferred_content_failure_is_run_time_failure(tmp_path):
    mgr = kit.manager(log_level=None)
    f = tmp_path / "f"
    ev = apply(mgr, name=str(f), ensure="present", content="{{ lookup('data.missing') }}")
    assert ev.failed and "missing key" in ev.errors[0]
    assert not f.exists()
    # a control gate protects a resource whose template would fail
    ev = apply(mgr, name=str(f), ensure="present", content="{{ lookup('data.missing') }}", control={"if": "false"})
    assert ev.skipped and not ev.failed
