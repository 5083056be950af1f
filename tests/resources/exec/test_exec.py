"""exec type on real commands: guards, returns, timeouts, path, environment, refresh."""
from __future__ import annotations

import time

import pytest

from ccm.model.errors import ValidationError
from ccm.registry import default_registry
from ccm.resources import properties as P
from ccm.resources.exec.logic import ExecLogic
from ccm.model.events import ResourceState
from tests import kit

SPEC = default_registry().spec("exec")


def props(**values):
    p = P.build(SPEC, values)
    P.validate(SPEC, p)
    return p


def apply(mgr, **values):
    ev = mgr.apply_resource(props(**values))
    mgr.record(ev)
    return ev


@pytest.mark.parametrize("values,extra,refresh,actions", [
    ({}, {}, False, ("execute",)),
    ({"creates": "/x"}, {"creates_satisfied": True}, False, ()),
    ({"onlyif": "false"}, {}, False, ()),
    ({"onlyif": "true"}, {"onlyif_satisfied": True}, False, ("execute",)),
    ({"unless": "true"}, {"unless_satisfied": True}, False, ()),
    ({"unless": "false"}, {}, False, ("execute",)),
    ({"refreshonly": True}, {}, False, ()),
    ({"refreshonly": True}, {}, True, ("execute",)),
    ({"creates": "/x"}, {"creates_satisfied": True}, True, ("execute",)),  # refresh overrides guards
])
def test_plan_table(values, extra, refresh, actions):
    p = props(name="/bin/true", **values)
    state = ResourceState(type="exec", name="/bin/true", ensure="present", extra=extra)
    assert ExecLogic().plan(p, state, refresh).actions == actions


def test_runs_and_creates_guard(tmp_path):
    mgr = kit.manager(log_level=None)
    marker = tmp_path / "marker"
    ev = apply(mgr, name=f"touch {marker}", creates=str(marker))
    assert ev.changed and not ev.failed and marker.exists()
    assert ev.status.to_dict()["exitcode"] == 0
    ev = apply(mgr, name=f"touch {marker}", creates=str(marker))
    assert not ev.changed and "exitcode" not in ev.status.to_dict()
    assert ev.status.to_dict()["creates_satisfied"] is True


def test_returns_and_failure_message():
    mgr = kit.manager(log_level=None)
    ev = apply(mgr, name="/bin/sh -c 'exit 3'")
    assert ev.failed
    assert ev.errors == ["failed to reach desired state: exit code 3: exit code 3 not in allowed returns [0]"]
    ev = apply(mgr, name="/bin/sh -c 'exit 3'", returns=[0, 3])
    assert not ev.failed and ev.changed


def test_failed_command_with_creates_is_still_a_failure(tmp_path):
    mgr = kit.manager(log_level=None)
    marker = tmp_path / "m"
    ev = apply(mgr, name=f"/bin/sh -c 'touch {marker}; exit 1'", creates=str(marker))
    assert ev.failed and "exit code 1" in ev.errors[0]


def test_guards_run_in_noop_and_command_does_not(tmp_path):
    mgr = kit.manager(log_level=None, noop=True)
    guard_trace = tmp_path / "guard-ran"
    out = tmp_path / "cmd-ran"
    ev = apply(mgr, name=f"touch {out}", onlyif=f"/bin/sh -c 'touch {guard_trace}'")
    assert guard_trace.exists(), "guards are read-only queries and run in noop"
    assert not out.exists()
    assert ev.noop and ev.changed and ev.noop_message == "Would have executed"


def test_timeout_kills_whole_process_group(tmp_path):
    mgr = kit.manager(log_level=None)
    pidfile = tmp_path / "child.pid"
    started = time.monotonic()
    ev = apply(mgr, name="/bin/sh", command=f"/bin/sh -c 'sleep 30 & echo $! > {pidfile}; wait'", timeout="1s")
    elapsed = time.monotonic() - started
    assert ev.failed and "timed out" in ev.errors[0]
    assert elapsed < 10
    child = int(pidfile.read_text())
    time.sleep(0.2)
    assert not _alive(child), "the background grandchild must be killed with its group"


def _alive(pid):
    """True when pid runs (a zombie left for an init that does not reap counts as dead)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_path_is_a_real_search_path_and_environment(tmp_path):
    bindir = tmp_path / "bin"
    bindir.mkdir()
    tool = bindir / "mytool"
    out = tmp_path / "out"
    tool.write_text(f"#!/bin/sh\necho \"$GREETING $PATH\" > {out}\n")
    tool.chmod(0o755)
    mgr = kit.manager(log_level=None)
    ev = apply(mgr, name="mytool", path=f"{bindir}:/usr/bin:/bin", environment=["GREETING=hi there"])
    assert not ev.failed, ev.errors
    assert out.read_text().strip() == f"hi there {bindir}:/usr/bin:/bin"
    ev = apply(mgr, name="mytool-missing-ccm")
    assert ev.failed and "executable file not found" in ev.errors[0]


def test_child_environment_is_fixed_not_inherited(tmp_path, monkeypatch):
    monkeypatch.setenv("CCM_SECRET_TOKEN", "leak")
    out = tmp_path / "env"
    mgr = kit.manager(log_level=None)
    ev = apply(mgr, name="/bin/sh", command=f"/bin/sh -c 'env > {out}'")
    assert not ev.failed
    env = dict(line.split("=", 1) for line in out.read_text().splitlines() if "=" in line)
    assert env["LANG"] == "C" and env["LC_ALL"] == "C"
    assert "CCM_SECRET_TOKEN" not in env


def test_cwd_and_shell_provider(tmp_path):
    mgr = kit.manager(log_level=None)
    ev = apply(mgr, name="pwd-check", command="pwd > here.txt", cwd=str(tmp_path), provider="shell")
    assert not ev.failed and ev.provider == "shell"
    assert (tmp_path / "here.txt").read_text().strip() == str(tmp_path)


def test_subscribe_refresh_and_missing_target(tmp_path):
    mgr = kit.manager(log_level=None)
    f = tmp_path / "conf"
    counter = tmp_path / "count"
    fspec = default_registry().spec("file")
    fp = P.build(fspec, {"name": str(f), "ensure": "present", "content": "v1", "owner": "0", "group": "0", "mode": "0644"})
    ev = mgr.apply_resource(fp)
    mgr.record(ev)
    assert ev.changed
    cmd = f"/bin/sh -c 'echo x >> {counter}'"
    ev = apply(mgr, name="reload", command=cmd, refreshonly=True, subscribe=[f"file#{f}"])
    assert ev.refreshed and ev.changed and counter.read_text() == "x\n"
    ev2 = mgr.apply_resource(fp.copy())
    mgr.record(ev2)
    assert not ev2.changed
    ev = apply(mgr, name="reload", command=cmd, refreshonly=True, subscribe=[f"file#{f}"])
    assert not ev.changed and counter.read_text() == "x\n"
    ev = apply(mgr, name="reload2", command=cmd, subscribe=["file#/nope"])
    assert ev.failed and "no events found for file#/nope" in ev.errors[0]


def test_logoutput_goes_to_user_log():
    mgr = kit.manager(log_level=None)
    ev = apply(mgr, name="/bin/echo line-one", logoutput=True)
    assert not ev.failed
    assert "line-one" in kit.output(mgr)


def test_logoutput_lines_are_marked_and_carried_output_is_scrubbed():
    """Issue 24: a command's lines carry output= (they cannot pass for ccm's own) and a URL
    password it prints reaches neither the log nor the failure."""
    mgr = kit.manager(log_level=None)
    ev = apply(mgr, name="noisy", command="/bin/sh -c 'echo https://u:Pw-Canary@h/r; echo oops >&2; exit 2'",
               logoutput=True)
    out = kit.output(mgr)
    assert ev.failed and "Pw-Canary" not in out and "Pw-Canary" not in ev.errors[0]
    assert " INFO  exec#noisy output=https://REDACTED@h/r" in out
    assert " WARN  exec#noisy stream=stderr output=oops" in out
    assert ev.errors[0].endswith("stderr:\n  oops\nstdout:\n  https://REDACTED@h/r")


@pytest.mark.parametrize("values,message", [
    ({"name": "x", "timeout": "soon"}, "invalid duration"),
    ({"name": "'unterminated"}, "Unterminated"),
    ({"name": "x", "subscribe": ["nohash"]}, "invalid subscribe format nohash: expected type#name"),
    ({"name": "x", "path": "relative/bin"}, 'invalid path: "relative/bin" is not an absolute path'),
    ({"name": "x", "path": "/bin::/usr/bin"}, "empty directory in path"),
    ({"name": "x", "environment": ["NOEQUALS"]}, "missing '='"),
    ({"name": "x", "environment": ["=v"]}, "empty key"),
    ({"name": "x", "returns": ["zero"]}, "expected a list of integers"),
])
def test_validation(values, message):
    with pytest.raises(ValidationError, match=message):
        props(**values)
