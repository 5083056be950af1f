"""systemd provider: recorded systemctl output for every state, argv exact, no extra env."""
from __future__ import annotations

import os

import pytest

from ccm.apply.runcache import RunCache
from ccm.model.errors import ProviderError
from ccm.resources.service import host
from ccm.resources.service.systemd import (PROPERTIES, SystemdFactory, SystemdProvider, parse_is_active,
                                           parse_is_enabled, parse_show)

from tests.resources.package.replay import FIXTURES, NullLock, ReplayRunner, fixture

ACTIVE = {"active": True, "activating": False, "failed": False, "inactive": False}
ENABLED = {"enabled": True, "enabled-runtime": True, "alias": True, "static": True, "indirect": True,
           "generated": True, "transient": True, "linked": False, "linked-runtime": False, "masked": False,
           "masked-runtime": False, "disabled": False}
RELOAD = ["systemctl", "daemon-reload"]


def test_every_recorded_state_is_covered():
    recorded = sorted(n for n in os.listdir(os.path.join(FIXTURES, "systemd"))
                      if n.endswith(".txt") and not n.startswith("show-"))
    assert recorded == sorted([f"is-active-{w}.txt" for w in ACTIVE] + [f"is-enabled-{w}.txt" for w in ENABLED])


@pytest.mark.parametrize("word", sorted(ACTIVE))
def test_is_active_states(word):
    assert parse_is_active(fixture(f"systemd/is-active-{word}.txt")) is ACTIVE[word]


@pytest.mark.parametrize("word", sorted(ENABLED))
def test_is_enabled_states(word):
    assert parse_is_enabled("nginx", fixture(f"systemd/is-enabled-{word}.txt")) is ENABLED[word]


def test_invalid_outputs_keep_the_raw_text():
    with pytest.raises(ProviderError) as err:
        parse_is_active("bogus\n")
    assert str(err.value) == "invalid systemctl is-active output: bogus\n"
    with pytest.raises(ProviderError) as err:
        parse_is_enabled("nginx", "")
    assert str(err.value) == "invalid systemctl is-enabled output: "
    with pytest.raises(ProviderError) as err:
        parse_is_enabled("nginx", "not-found\n")
    assert str(err.value) == "service nginx not found"


def test_is_enabled_of_an_unknown_unit_says_not_found():
    # recorded: ../shared/fixtures/recorded-2026-12/systemd/55-is-enabled-not-found.txt
    with pytest.raises(ProviderError) as err:
        parse_is_enabled("ccm-no-such-unit", "", 1,
                         "Failed to get unit file state for ccm-no-such-unit.service: No such file or directory\n")
    assert str(err.value) == "service ccm-no-such-unit not found"


def test_deactivating_and_reloading():
    assert parse_is_active("deactivating\n") is False and parse_is_active("reloading\n") is True


# `systemctl show --property=...` outputs recorded from systemd 252 in systemd-nspawn by
# tests/resources/service/test_systemd_real.py (CCM_RECORD_FIXTURES=1 make test-systemd).
def show_argv(*units):
    return ["systemctl", "show", f"--property={PROPERTIES}"] + list(units)


def provider(runner, lock=None):
    return SystemdProvider(runner, None, lock=lock or NullLock())


@pytest.mark.parametrize("name,unit,ensure,enabled", [
    ("show-active-enabled.txt", "ccm-sleep", "running", True),
    ("show-inactive-disabled.txt", "ccm-sleep", "stopped", False),
    ("show-masked.txt", "ccm-vendor", "stopped", False),
])
def test_status_from_one_show(name, unit, ensure, enabled):
    runner = ReplayRunner({}).on(show_argv(unit), (fixture(f"systemd/{name}"), "", 0))
    lock = NullLock()
    st = provider(runner, lock).status(unit)
    assert (st.ensure, st.metadata["enabled"]) == (ensure, enabled)
    assert st.to_dict()["metadata"] == {"name": unit, "provider": "systemd", "enabled": enabled,
                                        "running": ensure == "running"}
    assert st.to_dict()["protocol"] == "io.choria.ccm.v1.resource.service.state"
    assert runner.calls == [show_argv(unit)] and runner.envs == [{}]
    assert lock.operations == [f"systemctl status {unit}"]


def test_unknown_unit_is_not_found():
    runner = ReplayRunner({}).on(show_argv("ccm-no-such-unit"), (fixture("systemd/show-not-found.txt"), "", 0))
    with pytest.raises(ProviderError) as err:
        provider(runner).status("ccm-no-such-unit")
    assert str(err.value) == "service ccm-no-such-unit not found: systemd has no unit ccm-no-such-unit.service"
    assert runner.calls == [show_argv("ccm-no-such-unit")]


def test_one_show_for_every_unit_of_the_run_and_template_units():
    runner = ReplayRunner({})
    runner.on(show_argv("ccm-static", "ccm-tpl@one"), (fixture("systemd/show-static-and-template.txt"), "", 0))
    cache = RunCache([("service", "ccm-static"), ("service", "ccm-tpl@one"), ("file", "/etc/x")])
    states = []
    for unit in ("ccm-static", "ccm-tpl@one"):
        p = provider(runner)
        p.use_run_cache(cache)
        states.append(p.status(unit))
    assert [(s.ensure, s.metadata["enabled"]) for s in states] == [("running", True), ("running", True)]
    assert runner.calls == [show_argv("ccm-static", "ccm-tpl@one")]


def test_blocks_that_do_not_line_up_fall_back_to_one_unit():
    assert parse_show(fixture("systemd/show-static-and-template.txt"), ["ccm-static"]) is None
    runner = ReplayRunner({})
    runner.on(show_argv("ccm-sleep", "ccm-other"), (fixture("systemd/show-active-enabled.txt"), "", 0))
    runner.on(show_argv("ccm-sleep"), (fixture("systemd/show-active-enabled.txt"), "", 0))
    p = provider(runner)
    p.use_run_cache(RunCache([("service", "ccm-sleep"), ("service", "ccm-other")]))
    assert p.status("ccm-sleep").ensure == "running"
    assert runner.calls == [show_argv("ccm-sleep", "ccm-other"), show_argv("ccm-sleep")]


def test_daemon_reload_once_when_units_changed_on_disk():
    runner = ReplayRunner({})
    runner.on(show_argv("ccm-sleep", "ccm-other"), (fixture("systemd/show-need-daemon-reload.txt"), "", 0),
              (fixture("systemd/show-need-daemon-reload-after.txt"), "", 0))
    runner.on(RELOAD, ("", "", 0))
    cache = RunCache([("service", "ccm-sleep"), ("service", "ccm-other")])
    for unit in ("ccm-sleep", "ccm-other"):
        p = provider(runner)
        p.use_run_cache(cache)
        assert p.status(unit).ensure == "running"
    assert runner.calls == [show_argv("ccm-sleep", "ccm-other"), RELOAD, show_argv("ccm-sleep", "ccm-other")]


def test_aliases_and_other_file_states_ask_is_enabled():
    runner = ReplayRunner({})
    runner.on(show_argv("ccm-alias"), (fixture("systemd/show-alias-name.txt"), "", 0))
    runner.on(["systemctl", "is-enabled", "--system", "ccm-alias"], (fixture("systemd/is-enabled-alias.txt"), "", 0))
    st = provider(runner).status("ccm-alias")
    assert st.metadata["enabled"] is True
    assert runner.calls[-1] == ["systemctl", "is-enabled", "--system", "ccm-alias"]


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


def test_a_failed_action_carries_the_output_tail():
    runner = ReplayRunner({})
    stderr = ("Job for nginx.service failed because the control process exited with error code.\n"
              "See \"systemctl status nginx.service\" and \"journalctl -xeu nginx.service\" for details.\n")
    runner.on(["systemctl", "start", "--system", "nginx"], ("", stderr, 1))
    problem = SystemdProvider(runner, None, lock=NullLock()).start("nginx")
    assert problem.splitlines() == [
        'systemctl start --system nginx exited 1: See "systemctl status nginx.service" and '
        '"journalctl -xeu nginx.service" for details.',
        "stderr:", "  Job for nginx.service failed because the control process exited with error code.",
        '  See "systemctl status nginx.service" and "journalctl -xeu nginx.service" for details.']


def test_actions_drop_the_run_cache():
    cache = RunCache([("service", "a"), ("service", "b")])
    cache.load("systemd:show", lambda: {"a": {}})
    runner = ReplayRunner({}).on(["systemctl", "start", "--system", "a"], ("", "", 0))
    p = provider(runner)
    p.use_run_cache(cache)
    p.start("a")
    assert cache.load("systemd:show", lambda: "fresh") == "fresh"


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
