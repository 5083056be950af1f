"""sysv provider: a real LSB init script and daemon in a temp dir (no root needed), rc links
in a temp rc tree, and the update-rc.d/chkconfig command lines replayed."""
from __future__ import annotations

import os

import pytest

from ccm.model.errors import ProviderError
from ccm.resources.service import host, sysv
from ccm.resources.service.sysv import SysvFactory, SysvProvider, start_links
from ccm.runner import SubprocessRunner

from tests.resources.package.replay import NullLock, ReplayRunner
from tests.resources.service import initscript

NAME = "ccmtestd"


@pytest.fixture
def daemon(tmp_path):
    init_dir = tmp_path / "init.d"
    init_dir.mkdir()
    pidfile = str(tmp_path / f"{NAME}.pid")
    log = str(tmp_path / "calls.log")
    initscript.write(str(init_dir / NAME), NAME, pidfile, log)
    yield {"init_dir": str(init_dir), "pidfile": pidfile, "log": log, "rc_root": str(tmp_path / "etc")}
    initscript.kill(pidfile)


def provider(d, runner=None, **kw):
    return SysvProvider(runner or SubprocessRunner(), None, lock=NullLock(), init_dir=d["init_dir"],
                        rc_root=d["rc_root"], **kw)


def test_start_status_restart_stop_with_a_real_script(daemon):
    p = provider(daemon)
    st = p.status(NAME)
    assert st.ensure == "stopped"
    assert st.to_dict()["metadata"] == {"name": NAME, "provider": "sysv", "enabled": False, "running": False}
    assert p.start(NAME) is None
    pid = initscript.read_pid(daemon["pidfile"])
    assert initscript.alive(pid)
    assert p.status(NAME).ensure == "running"
    assert p.restart(NAME) is None
    pid2 = initscript.read_pid(daemon["pidfile"])
    assert pid2 != pid and initscript.alive(pid2) and not initscript.alive(pid)
    assert p.stop(NAME) is None
    assert not initscript.alive(pid2)
    assert p.status(NAME).ensure == "stopped"
    with open(daemon["log"]) as fh:
        assert fh.read().split() == ["status", "start", "status", "restart", "stop", "start", "stop", "status"]


def test_lsb_dead_with_pidfile_is_stopped(daemon):
    with open(daemon["pidfile"], "w") as fh:
        fh.write("999999\n")
    assert provider(daemon).status(NAME).ensure == "stopped"   # exit 1


def test_unknown_status_is_an_error(tmp_path, daemon):
    script = os.path.join(daemon["init_dir"], "weird")
    with open(script, "w") as fh:
        fh.write("#!/bin/sh\necho 'status unknown' >&2\nexit 4\n")
    os.chmod(script, 0o755)
    with pytest.raises(ProviderError) as err:
        provider(daemon).status("weird")
    assert str(err.value) == f"cannot tell whether weird is running: {script} status exited 4: status unknown"


def test_missing_script(daemon):
    with pytest.raises(ProviderError) as err:
        provider(daemon).status("nothere")
    assert str(err.value) == f"service nothere not found: {daemon['init_dir']}/nothere does not exist"


def test_failed_start_returns_the_scripts_complaint(daemon):
    script = os.path.join(daemon["init_dir"], "broken")
    with open(script, "w") as fh:
        fh.write("#!/bin/sh\n[ \"$1\" = status ] && exit 3\necho 'broken: missing config' >&2\nexit 1\n")
    os.chmod(script, 0o755)
    assert provider(daemon).start("broken") == f"{script} start exited 1: broken: missing config"


def test_hung_script_times_out(daemon):
    script = os.path.join(daemon["init_dir"], "hang")
    with open(script, "w") as fh:
        fh.write("#!/bin/sh\nsleep 30\n")
    os.chmod(script, 0o755)
    problem = provider(daemon, timeout=0.5).start("hang")
    assert problem == f"{script} start: command timed out after 0.5s and was killed"


def test_enabled_detection_both_layouts(tmp_path):
    rc = tmp_path / "etc"
    for level in "0123456S":
        (rc / f"rc{level}.d").mkdir(parents=True)
    assert start_links(str(rc), NAME) == []
    os.symlink(f"../init.d/{NAME}", rc / "rc0.d" / f"K01{NAME}")
    os.symlink(f"../init.d/{NAME}", rc / "rc2.d" / f"K01{NAME}")
    assert start_links(str(rc), NAME) == []                     # disabled: K links only
    os.symlink(f"../init.d/{NAME}", rc / "rc3.d" / f"S02{NAME}")
    os.symlink("../init.d/other", rc / "rc3.d" / f"S02{NAME}x")  # a different service
    assert start_links(str(rc), NAME) == [str(rc / "rc3.d" / f"S02{NAME}")]
    rh = tmp_path / "rh"
    (rh / "rc.d" / "rc5.d").mkdir(parents=True)
    os.symlink(f"../init.d/{NAME}", rh / "rc.d" / "rc5.d" / f"S85{NAME}")
    assert start_links(str(rh), NAME) == [str(rh / "rc.d" / "rc5.d" / f"S85{NAME}")]


def test_enable_disable_with_update_rc_d(daemon):
    runner = ReplayRunner({})
    for args in (["defaults"], ["enable"], ["disable"]):
        runner.on(["update-rc.d", NAME] + args, ("", "", 0))
    p = provider(daemon, runner, update_rc_d="update-rc.d", chkconfig=None)
    assert p.enable(NAME) is None
    assert p.disable(NAME) is None
    assert runner.calls == [["update-rc.d", NAME, "defaults"], ["update-rc.d", NAME, "enable"],
                            ["update-rc.d", NAME, "disable"]]
    assert p.lock.operations == [f"enable {NAME}", f"disable {NAME}"]


def test_enable_disable_with_chkconfig(daemon):
    runner = ReplayRunner({})
    runner.on(["chkconfig", "--add", NAME], ("", "", 0))
    runner.on(["chkconfig", NAME, "on"], ("", "", 0))
    runner.on(["chkconfig", NAME, "off"], ("", "error reading information on service\n", 1))
    p = provider(daemon, runner, update_rc_d=None, chkconfig="chkconfig")
    assert p.enable(NAME) is None
    assert p.disable(NAME) == f"chkconfig {NAME} off exited 1: error reading information on service"


def test_enable_without_tools(daemon):
    p = provider(daemon, ReplayRunner({}), update_rc_d=None, chkconfig=None)
    with pytest.raises(ProviderError) as err:
        p.enable(NAME)
    assert str(err.value) == f"cannot enable {NAME}: neither update-rc.d nor chkconfig is installed"


def test_factory(monkeypatch):
    monkeypatch.setattr(host, "systemd_is_pid1", lambda: True)
    assert tuple(SysvFactory().is_manageable({}, None)) == (False, 1)
    monkeypatch.setattr(host, "systemd_is_pid1", lambda: False)
    assert tuple(SysvFactory().is_manageable({}, None)) == (os.path.isdir(sysv.INIT_DIR), 1)


FAILING_SCRIPT = """#!/bin/sh
case "$1" in
  status) exit 3 ;;
  start)
    i=1
    while [ $i -le 30 ]; do echo "starting step $i failed" >&2; i=$((i+1)); done
    echo "config check: token=hunter2-secret"
    echo "giving up"
    exit 1 ;;
esac
exit 0
"""


def test_a_failed_start_carries_the_last_20_lines_of_output(tmp_path):
    """Like a failed exec: stderr first, then stdout, 20 lines in total, in the event's error."""
    from ccm.registry import Registry
    from ccm.resources import BUILTIN_TYPES
    from ccm.resources import properties as P

    from tests import kit

    init_dir = tmp_path / "init.d"
    init_dir.mkdir()
    script = init_dir / "ccmfaild"
    script.write_text(FAILING_SCRIPT)
    script.chmod(0o755)
    p = provider({"init_dir": str(init_dir), "rc_root": str(tmp_path / "etc")})
    problem = p.start("ccmfaild")
    lines = problem.splitlines()
    assert lines[0] == f"{script} start exited 1: giving up"
    assert lines[1] == "stderr (last 18 of 30 lines):" and lines[2] == "  starting step 13 failed"
    assert lines[19] == "  starting step 30 failed" and lines[20:] == [
        "stdout:", "  config check: token=hunter2-secret", "  giving up"]
    assert len([ln for ln in lines if ln.startswith("  ")]) == 20

    reg = Registry(BUILTIN_TYPES)
    reg.register(kit.StaticFactory("service", "sysv", p))
    m = kit.manager(log_level=None, registry=reg)
    spec = reg.spec("service")
    props = P.build(spec, {"name": "ccmfaild", "ensure": "running"})
    P.validate(spec, props)
    ev = m.apply_resource(props)
    assert ev.failed
    error = ev.errors[0].splitlines()
    assert error[0] == ("failed to reach desired state: running: service is stopped, expected running "
                        f"({script} start exited 1: giving up)")
    assert error[1:] == lines[1:]


def test_secrets_given_to_the_runner_are_redacted_from_the_tail(tmp_path):
    from ccm.model.runner import CommandResult

    res = CommandResult(argv=["/etc/init.d/x", "start"], stdout="a\nuses hunter2-secret\n", stderr="boom\n",
                        exit_code=1, redactions=("hunter2-secret",))
    problem = sysv.command_problem(res)
    assert "hunter2-secret" not in problem and "uses ******" in problem
