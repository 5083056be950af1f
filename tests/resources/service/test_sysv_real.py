"""Real SysV service management on this host (marker ``sysv``, root, no systemd as PID 1).

A small LSB init script is installed as /etc/init.d/ccm-sysv-test; it runs a tiny
daemon with a pidfile. ccm starts, stops, restarts it on subscribe (a file resource
changed: the pid changes), enables and disables it with the host's update-rc.d or
chkconfig. Everything is removed afterwards: daemon killed, rc links and script deleted.
"""
from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from ccm.registry import Registry
from ccm.resources import BUILTIN_TYPES
from ccm.resources import properties as P
from ccm.resources.service import host
from ccm.resources.service.sysv import start_links

from tests import kit
from tests.resources.service import initscript

pytestmark = [
    pytest.mark.sysv,
    pytest.mark.skipif(os.geteuid() != 0, reason="needs root"),
    pytest.mark.skipif(host.systemd_is_pid1(), reason="systemd is PID 1 here: the systemd provider manages services"),
    pytest.mark.skipif(not os.path.isdir("/etc/init.d"), reason="no /etc/init.d"),
]

NAME = "ccm-sysv-test"
SCRIPT = f"/etc/init.d/{NAME}"


def _remove_links():
    if shutil.which("update-rc.d"):
        subprocess.run(["update-rc.d", "-f", NAME, "remove"], capture_output=True)
    elif shutil.which("chkconfig"):
        subprocess.run(["chkconfig", "--del", NAME], capture_output=True)
    for level in "0123456S":
        for d in (f"/etc/rc{level}.d", f"/etc/rc.d/rc{level}.d"):
            if os.path.isdir(d):
                for n in os.listdir(d):
                    if n[:1] in "SK" and n[3:] == NAME:
                        os.unlink(os.path.join(d, n))


@pytest.fixture(scope="module", autouse=True)
def boot_tool():
    if not shutil.which("update-rc.d") and not shutil.which("chkconfig"):
        if shutil.which("apt-get"):
            subprocess.run(["apt-get", "install", "-y", "-q", "init-system-helpers"], check=False,
                           env={"PATH": os.environ["PATH"], "DEBIAN_FRONTEND": "noninteractive"})
    if not shutil.which("update-rc.d") and not shutil.which("chkconfig"):
        pytest.skip("neither update-rc.d nor chkconfig available")


@pytest.fixture
def daemon(tmp_path):
    assert not os.path.exists(SCRIPT), f"{SCRIPT} already exists; refusing to overwrite it"
    pidfile = str(tmp_path / f"{NAME}.pid")
    log = str(tmp_path / "calls.log")
    initscript.write(SCRIPT, NAME, pidfile, log)
    try:
        yield {"pidfile": pidfile, "log": log, "tmp": tmp_path}
    finally:
        initscript.kill(pidfile)
        _remove_links()
        os.unlink(SCRIPT)
    assert not start_links("/etc", NAME)


def new_manager():
    return kit.manager(log_level=None, registry=Registry(BUILTIN_TYPES))


def apply(m, type_name, **values):
    spec = m.registry.spec(type_name)
    p = P.build(spec, values)
    P.validate(spec, p)
    ev = m.apply_resource(p)
    m.record(ev)
    return ev


def service(m, **values):
    values.setdefault("name", NAME)
    return apply(m, "service", **values)


def config_file(m, path, content):
    return apply(m, "file", name=str(path), ensure="present", content=content, owner="root", group="root",
                 mode="0644")


def calls(d):
    with open(d["log"]) as fh:
        return fh.read().split()


def test_start_stop_and_stable(daemon):
    m = new_manager()
    ev = service(m, ensure="stopped")
    assert not ev.failed and not ev.changed and ev.provider == "sysv", ev.errors
    ev = service(m)                                   # ensure defaults to running
    assert not ev.failed and ev.changed, ev.errors
    pid = initscript.read_pid(daemon["pidfile"])
    assert initscript.alive(pid)
    assert ev.status.to_dict()["metadata"] == {"name": NAME, "provider": "sysv", "enabled": False, "running": True}
    ev = service(m)
    assert not ev.changed and ev.status.stable
    assert initscript.read_pid(daemon["pidfile"]) == pid
    ev = service(m, ensure="stopped")
    assert ev.changed and not ev.failed
    assert not initscript.alive(pid)
    assert calls(daemon) == ["status", "status", "start", "status", "status", "status", "stop", "status"]


def test_restart_on_subscribe_changes_the_pid(daemon):
    m = new_manager()
    conf = daemon["tmp"] / "app.conf"
    assert config_file(m, conf, "a=1\n").changed
    ev = service(m, subscribe=[f"file#{conf}"])
    assert ev.changed and not ev.refreshed, ev.errors       # it was stopped: started, no refresh
    pid = initscript.read_pid(daemon["pidfile"])

    assert not config_file(m, conf, "a=1\n").changed        # unchanged config: nothing
    ev = service(m, subscribe=[f"file#{conf}"])
    assert not ev.changed and not ev.refreshed
    assert initscript.read_pid(daemon["pidfile"]) == pid

    assert config_file(m, conf, "a=2\n").changed            # changed config: restart
    ev = service(m, subscribe=[f"file#{conf}"])
    assert ev.changed and ev.refreshed and not ev.failed, ev.errors
    new_pid = initscript.read_pid(daemon["pidfile"])
    assert new_pid != pid and initscript.alive(new_pid) and not initscript.alive(pid)
    assert "restart" in calls(daemon)


def test_enable_and_disable(daemon):
    m = new_manager()
    ev = service(m, ensure="stopped", enable=True)
    assert ev.changed and not ev.failed, ev.errors
    assert start_links("/etc", NAME), "no S links after enable"
    assert ev.status.metadata["enabled"] is True
    assert not service(m, ensure="stopped", enable=True).changed

    ev = service(m, ensure="stopped", enable=False)
    assert ev.changed and not ev.failed, ev.errors
    assert not start_links("/etc", NAME)
    assert ev.status.metadata["enabled"] is False
    assert not service(m, ensure="stopped", enable=False).changed

    ev = service(m, ensure="running", enable=True)            # from disabled (K links) back to enabled
    assert ev.changed and not ev.failed and ev.status.metadata == {
        "name": NAME, "provider": "sysv", "enabled": True, "running": True}
    assert start_links("/etc", NAME)


def test_noop_changes_nothing(daemon):
    m = kit.manager(log_level=None, registry=Registry(BUILTIN_TYPES), noop=True)
    ev = service(m, enable=True)
    assert ev.changed and ev.noop and ev.noop_message == "Would have started, would have enabled"
    assert initscript.read_pid(daemon["pidfile"]) is None
    assert not start_links("/etc", NAME)
    assert calls(daemon) == ["status"]


def test_missing_service_fails_only_itself(daemon):
    m = new_manager()
    ev = service(m, name="ccm-no-such-service")
    assert ev.failed and ev.errors == ["service ccm-no-such-service not found: /etc/init.d/ccm-no-such-service does not exist"]
    assert not service(m, ensure="running").failed
