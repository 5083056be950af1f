"""systemd provider: recorded systemctl output for every state, argv exact, no extra env."""
from __future__ import annotations

import os

import pytest

from ccm.model.errors import ProviderError
from ccm.resources.service import host
from ccm.resources.service.systemd import SystemdFactory, SystemdProvider, parse_is_active, parse_is_enabled

from tests.resources.package.replay import FIXTURES, NullLock, ReplayRunner, fixture

ACTIVE = {"active": True, "activating": False, "failed": False, "inactive": False}
ENABLED = {"enabled": True, "enabled-runtime": True, "alias": True, "static": True, "indirect": True,
           "generated": True, "transient": True, "linked": False, "linked-runtime": False, "masked": False,
           "masked-runtime": False, "disabled": False}
SHOW = ["systemctl", "show", "--property=NeedDaemonReload", "nginx"]
RELOAD = ["systemctl", "daemon-reload"]


def test_every_recorded_state_is_covered():
    recorded = sorted(n for n in os.listdir(os.path.join(FIXTURES, "systemd")) if n.endswith(".txt"))
    assert recorded == sorted([f"is-active-{w}.txt" for w in ACTIVE] + [f"is-enabled-{w}.txt" for w in ENABLED])


@pytest.mark.parametrize("word", sorted(ACTIVE))
def test_is_active_states(word):
    assert parse_is_active(fixture(f"systemd/is-active-{word}.txt")) is ACTIVE[word]


@pytest.mark.parametrize("word", sorted(ENABLED))
def test_is_enabled_states(word):
    assert parse_is_enabled("nginx", fixture(f"systemd/is-enabled-{word}.txt")) is ENABLED[word]


def test_invalid_outputs_keep_the_raw_text():
    with pytest.raises(ProviderError) as err:
        parse_is_active("deactivating\n")
    assert str(err.value) == "invalid systemctl is-active output: deactivating\n"
    with pytest.raises(ProviderError) as err:
        parse_is_enabled("nginx", "")
    assert str(err.value) == "invalid systemctl is-enabled output: "
    with pytest.raises(ProviderError) as err:
        parse_is_enabled("nginx", "not-found\n")
    assert str(err.value) == "service nginx not found"


def status_runner(active, enabled):
    runner = ReplayRunner({})
    runner.on(RELOAD, ("", "", 0))
    runner.on(SHOW, ("NeedDaemonReload=no\n", "", 0))   # synthesised systemctl show output
    runner.on(["systemctl", "is-active", "--system", "nginx"], (fixture(f"systemd/is-active-{active}.txt"), "", 3))
    runner.on(["systemctl", "is-enabled", "--system", "nginx"], (fixture(f"systemd/is-enabled-{enabled}.txt"), "", 0))
    return runner


def test_status_and_daemon_reload_once_per_runner():
    runner = status_runner("active", "enabled-runtime")
    lock = NullLock()
    factory = SystemdFactory()
    st = SystemdProvider(runner, None, lock=lock, reloaded=factory._reloaded).status("nginx")
    assert st.ensure == "running"
    assert st.to_dict()["metadata"] == {"name": "nginx", "provider": "systemd", "enabled": True, "running": True}
    assert st.to_dict()["protocol"] == "io.choria.ccm.v1.resource.service.state"
    # a second resource in the same run (a new provider from the same factory, same runner)
    st2 = SystemdProvider(runner, None, lock=lock, reloaded=factory._reloaded).status("nginx")
    assert st2.ensure == "running"
    assert runner.calls == [
        RELOAD, ["systemctl", "is-active", "--system", "nginx"], ["systemctl", "is-enabled", "--system", "nginx"],
        SHOW, ["systemctl", "is-active", "--system", "nginx"], ["systemctl", "is-enabled", "--system", "nginx"],
    ]
    assert runner.envs == [{}] * 6
    assert lock.operations == ["systemctl status nginx", "systemctl status nginx"]


def test_reload_again_when_systemd_says_the_unit_changed_on_disk():
    runner = status_runner("inactive", "disabled")
    runner.responses[tuple(SHOW)] = [("NeedDaemonReload=yes\n", "", 0)]
    p = SystemdProvider(runner, None, lock=NullLock())
    p.status("nginx")
    p.status("nginx")
    assert runner.calls.count(RELOAD) == 2
    assert p.status("nginx").ensure == "stopped"


def test_a_new_runner_is_a_new_run():
    factory = SystemdFactory()
    for _ in range(2):
        runner = status_runner("failed", "masked")
        st = SystemdProvider(runner, None, lock=NullLock(), reloaded=factory._reloaded).status("nginx")
        assert runner.calls[0] == RELOAD
        assert st.ensure == "stopped" and st.metadata["enabled"] is False


@pytest.mark.parametrize("verb", ["start", "stop", "restart", "enable", "disable"])
def test_actions(verb):
    runner = ReplayRunner({})
    runner.on(["systemctl", verb, "--system", "nginx"], ("", "", 0), ("", "Job for nginx.service failed.\n", 1))
    lock = NullLock()
    p = SystemdProvider(runner, None, lock=lock)
    assert getattr(p, verb)("nginx") is None
    assert getattr(p, verb)("nginx") == f"systemctl {verb} --system nginx exited 1: Job for nginx.service failed."
    assert runner.calls == [["systemctl", verb, "--system", "nginx"]] * 2
    assert lock.operations == [f"systemctl {verb} nginx"] * 2


def test_template_unit_names_pass_through():
    runner = ReplayRunner({})
    runner.on(RELOAD, ("", "", 0))
    runner.on(["systemctl", "is-active", "--system", "getty@tty1"], ("active\n", "", 0))
    runner.on(["systemctl", "is-enabled", "--system", "getty@tty1"], ("indirect\n", "", 0))
    st = SystemdProvider(runner, None, lock=NullLock()).status("getty@tty1")
    assert st.ensure == "running" and st.metadata["enabled"] is True


def test_pid1_detection(tmp_path):
    (tmp_path / "1").mkdir()
    (tmp_path / "1" / "comm").write_text("systemd\n")
    assert host.systemd_is_pid1(str(tmp_path), str(tmp_path / "nope"))
    (tmp_path / "1" / "comm").write_text("bash\n")
    assert not host.systemd_is_pid1(str(tmp_path), str(tmp_path / "nope"))
    (tmp_path / "run").mkdir()
    assert host.systemd_is_pid1(str(tmp_path), str(tmp_path / "run"))


def test_factory_needs_systemd_as_pid1(monkeypatch):
    monkeypatch.setattr(host, "which", lambda t: "/usr/bin/" + t)
    monkeypatch.setattr(host, "systemd_is_pid1", lambda: False)
    assert tuple(SystemdFactory().is_manageable({}, None)) == (False, 1)
    monkeypatch.setattr(host, "systemd_is_pid1", lambda: True)
    assert tuple(SystemdFactory().is_manageable({}, None)) == (True, 1)
    monkeypatch.setattr(host, "which", lambda t: None)
    assert tuple(SystemdFactory().is_manageable({}, None)) == (False, 1)
