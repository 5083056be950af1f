"""service type: validation, the pure decision table and the flow with subscribe/refresh."""
from __future__ import annotations

from typing import List

import pytest

from ccm.model.errors import ValidationError
from ccm.model.events import ResourceState, TransactionEvent
from ccm.registry import Registry
from ccm.resources import BUILTIN_TYPES
from ccm.resources import properties as P
from ccm.resources.service.logic import ServiceLogic

from tests import kit

REG = Registry(BUILTIN_TYPES)
SPEC = REG.spec("service")


def props(**values):
    values.setdefault("name", "nginx")
    p = P.build(SPEC, values)
    P.validate(SPEC, p)
    return p


def observed(running, enabled=False):
    return ResourceState(type="service", name="nginx", ensure="running" if running else "stopped",
                         extra={"metadata": {"name": "nginx", "provider": "fake", "enabled": enabled,
                                             "running": running}})


# --- validation ----------------------------------------------------------------------------

def test_default_ensure_is_running():
    assert props().ensure == "running"


@pytest.mark.parametrize("values,message", [
    ({"ensure": "started"}, 'service#nginx: ensure: invalid ensure value: invalid ensure property "started" expects "running" or "stopped"'),
    ({"name": "ng;inx"}, 'service#ng;inx: name: service name contains dangerous characters: "ng;inx"'),
    ({"name": "ng inx"}, 'service#ng inx: name: service name contains invalid characters: "ng inx" (allowed: alphanumeric, ._+:~@-)'),
    ({"subscribe": ["file"]}, "service#nginx: subscribe: invalid subscribe format file: expected type#name (exactly one '#')"),
    ({"subscribe": ["file#a#b"]}, "service#nginx: subscribe: invalid subscribe format file#a#b: expected type#name (exactly one '#')"),
    ({"alias": "a#b"}, "service#nginx: alias: 'a#b' must not contain '#': a reference (type#alias) could not name it"),
    ({"enable": "yes"}, "service#nginx: enable: expected a boolean, got a string"),
])
def test_validation_errors(values, message):
    with pytest.raises(ValidationError) as err:
        props(**values)
    assert str(err.value) == message


def test_template_units_are_accepted():
    props(name="getty@tty1.service")
    props(name="openvpn-client@office")


# --- pure decisions ------------------------------------------------------------------------

@pytest.mark.parametrize("want,running,enabled,refresh,actions,message,refreshed", [
    ({"ensure": "running"}, True, False, False, (), "", False),
    ({"ensure": "stopped"}, False, False, False, (), "", False),
    ({"ensure": "running"}, False, False, False, ("start",), "Would have started", False),
    ({"ensure": "stopped"}, True, False, False, ("stop",), "Would have stopped", False),
    ({"ensure": "running"}, True, False, True, ("restart",), "Would have restarted via subscribe", True),
    ({"ensure": "running"}, False, False, True, ("start",), "Would have started", False),   # start covers it
    ({"ensure": "stopped"}, True, False, True, ("stop",), "Would have stopped", False),      # only when running
    ({"ensure": "stopped"}, False, False, True, (), "", False),
    ({"ensure": "running", "enable": True}, True, False, False, ("enable",), "Would have enabled", False),
    ({"ensure": "running", "enable": False}, True, True, False, ("disable",), "Would have disabled", False),
    ({"ensure": "running", "enable": True}, True, True, False, (), "", False),
    ({"ensure": "running"}, True, True, False, (), "", False),               # enable unset: leave boot alone
    ({"ensure": "running", "enable": True}, False, False, False, ("start", "enable"),
     "Would have started, would have enabled", False),
    ({"ensure": "stopped", "enable": False}, True, True, False, ("stop", "disable"),
     "Would have stopped, would have disabled", False),
    ({"ensure": "running", "enable": True}, True, False, True, ("restart", "enable"),
     "Would have restarted via subscribe, would have enabled", True),
])
def test_plan_table(want, running, enabled, refresh, actions, message, refreshed):
    plan = ServiceLogic().plan(props(**want), observed(running, enabled), refresh)
    assert plan.actions == actions
    assert plan.noop_message == message
    assert plan.refresh == refreshed


@pytest.mark.parametrize("want,running,enabled,result", [
    ({"ensure": "running"}, False, False, (False, "service is stopped, expected running")),
    ({"ensure": "stopped"}, True, False, (False, "service is running, expected stopped")),
    ({"ensure": "running", "enable": True}, True, False, (False, "service is disabled, expected enabled")),
    ({"ensure": "running", "enable": False}, True, True, (False, "service is enabled, expected disabled")),
    ({"ensure": "running", "enable": False}, True, False, (True, "")),
])
def test_is_desired(want, running, enabled, result):
    assert ServiceLogic().is_desired(props(**want), observed(running, enabled)) == result


# --- flow with a recording fake provider ---------------------------------------------------

class FakeServiceProvider:
    name = "fake"

    def __init__(self, running=False, enabled=False, broken=False):
        self.running, self.enabled, self.broken = running, enabled, broken
        self.calls: List[str] = []
        self.starts = 0

    def status(self, name):
        return observed(self.running, self.enabled)

    def _do(self, verb, **change):
        self.calls.append(verb)
        if self.broken:
            return f"systemctl {verb} --system nginx exited 1: Job for nginx.service failed"
        for k, v in change.items():
            setattr(self, k, v)
        return None

    def start(self, name):
        self.starts += 1
        return self._do("start", running=True)

    def stop(self, name):
        return self._do("stop", running=False)

    def restart(self, name):
        self.starts += 1
        return self._do("restart", running=True)

    def enable(self, name):
        return self._do("enable", enabled=True)

    def disable(self, name):
        return self._do("disable", enabled=False)


def manager(provider, noop=False):
    reg = Registry(BUILTIN_TYPES)
    reg.register(kit.StaticFactory("service", "fake", provider))
    return kit.manager(log_level=None, registry=reg, noop=noop)


def apply(m, **values):
    values.setdefault("name", "nginx")
    spec = m.registry.spec("service")
    p = P.build(spec, values)
    P.validate(spec, p)
    ev = m.apply_resource(p)
    m.record(ev)
    return ev


def record_file(m, changed):
    m.record(TransactionEvent(type="file", name="/etc/nginx.conf", changed=changed))


def test_subscribe_restarts_running_service_and_marks_refreshed():
    fake = FakeServiceProvider(running=True)
    m = manager(fake)
    record_file(m, changed=True)
    ev = apply(m, subscribe=["file#/etc/nginx.conf"])
    assert not ev.failed and ev.refreshed and ev.changed
    assert ev.status.refreshed
    assert fake.calls == ["restart"]


def test_subscribe_unchanged_does_nothing():
    fake = FakeServiceProvider(running=True)
    m = manager(fake)
    record_file(m, changed=False)
    ev = apply(m, subscribe=["file#/etc/nginx.conf"])
    assert not ev.failed and not ev.refreshed and not ev.changed and fake.calls == []


def test_subscribe_on_stopped_service_just_starts_it():
    fake = FakeServiceProvider(running=False)
    m = manager(fake)
    record_file(m, changed=True)
    ev = apply(m, subscribe=["file#/etc/nginx.conf"])
    assert ev.changed and not ev.refreshed and fake.calls == ["start"] and fake.starts == 1


def test_subscribe_ignored_when_ensured_stopped():
    fake = FakeServiceProvider(running=False)
    m = manager(fake)
    record_file(m, changed=True)
    ev = apply(m, ensure="stopped", subscribe=["file#/etc/nginx.conf"])
    assert not ev.changed and not ev.refreshed and fake.calls == []


def test_subscribe_without_event_fails_this_resource_only():
    fake = FakeServiceProvider(running=True)
    m = manager(fake)
    ev = apply(m, subscribe=["file#/etc/missing.conf"])
    assert ev.failed and ev.errors == ["no events found for file#/etc/missing.conf"]
    assert fake.calls == []


def test_noop_describes_and_does_nothing():
    fake = FakeServiceProvider(running=False, enabled=False)
    m = manager(fake, noop=True)
    ev = apply(m, enable=True)
    assert ev.changed and ev.noop and ev.noop_message == "Would have started, would have enabled"
    assert fake.calls == []


def test_failed_start_reports_reason_and_command_output():
    fake = FakeServiceProvider(running=False, broken=True)
    m = manager(fake)
    ev = apply(m)
    assert ev.failed
    assert ev.errors == ["failed to reach desired state: running: service is stopped, expected running "
                         "(systemctl start --system nginx exited 1: Job for nginx.service failed)"]
    assert "Service command failed" in kit.output(m)
