"""Real systemd 252 as PID 1 in systemd-nspawn containers (marker ``systemd``, root).

ccm runs INSIDE the container (``dist/ccm.pyz``, bound read-only at ``/ccm``, run by the
container's python3), so provider selection sees systemd as PID 1 exactly as on a host.
A wrapper directory in front of ccm's PATH (``/ccmwrap``, the lookup rule of
``ccm.model.runner``) logs every ``systemctl`` call, so the tests count daemon-reloads and
batched ``show`` calls. Every write lands in the container's tmpfs overlay
(``--volatile=overlay``): the cached root and the host are left as they were.

With ``CCM_RECORD_FIXTURES=1`` the ``systemctl show`` outputs the replay tests use are
written again into ``tests/fixtures/systemd/`` (otherwise compared byte for byte).
"""
from __future__ import annotations

import json
import os
import re
import shutil
import textwrap

import pytest

from ccm.resources.service.systemd import PROPERTIES
from tests.hosts import roots
from tests.resources.service.nspawn import Container

pytestmark = [
    pytest.mark.systemd,
    pytest.mark.skipif(os.geteuid() != 0, reason="needs root"),
    pytest.mark.skipif(not all(shutil.which(t) for t in ("systemd-nspawn", "nsenter", "debootstrap")),
                       reason="needs systemd-container and debootstrap (make test-systemd installs them)"),
]

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
PYZ = os.environ.get("CCM_TEST_PYZ") or os.path.join(REPO, "dist", "ccm.pyz")
FIXTURES = os.path.join(REPO, "tests", "fixtures", "systemd")
WRAP_PATH = "/ccmwrap:/usr/bin:/bin:/usr/sbin:/sbin"
LOG = "/run/systemctl-calls.log"

SLEEP_UNIT = """\
[Unit]
Description=ccm test: sleep forever{extra}

[Service]
Type=simple
ExecStart=/bin/sleep infinity

[Install]
WantedBy=multi-user.target
"""
ALIASED_UNIT = SLEEP_UNIT.format(extra="") + "Alias=ccm-alias.service\n"
STATIC_UNIT = "[Unit]\nDescription=ccm test: static\n\n[Service]\nExecStart=/bin/sleep infinity\n"


def readme_block():
    text = open(os.path.join(REPO, "README.md"), encoding="utf-8").read()
    section = text[text.index("### Shell scripts"):]
    return re.search(r"```sh\n(.*?)```", section, re.S).group(1)


class Box:
    """A booted container with ccm and the test units in place."""

    def __init__(self, ct):
        self.ct = ct

    def sh(self, *argv, check=True):
        r = self.ct.run(list(argv))
        if check:
            assert r.returncode == 0, (argv, r.stdout, r.stderr)
        return r

    def ccm(self, *args, check=True):
        r = self.ct.run(["python3", "/ccm/ccm.pyz"] + list(args), env={"PATH": WRAP_PATH, "HOME": "/root"})
        if check:
            assert r.returncode == 0, (args, r.stdout, r.stderr)
        return r

    def apply(self, resources, check=True, noop=False):
        self.ct.write("/tmp/manifest.yaml", "ccm:\n  resources:\n" + textwrap.indent(resources, "    "))
        self.ct.write(LOG, "")
        r = self.ccm("apply", "/tmp/manifest.yaml", "--json", *(["--noop"] if noop else []), check=False)
        assert r.stdout.startswith("{"), r.stdout + r.stderr
        doc = json.loads(r.stdout)
        if check:
            assert r.returncode == 0 and not any(e["failed"] for e in doc["events"]), r.stdout
        return doc["events"]

    def calls(self):
        with open(self.ct.path(LOG)) as fh:
            return [ln.split() for ln in fh.read().splitlines()]

    def active(self, unit):
        return self.sh("systemctl", "is-active", unit, check=False).stdout.strip()

    def enabled(self, unit):
        return self.sh("systemctl", "is-enabled", unit, check=False).stdout.strip()

    def main_pid(self, unit):
        return int(self.sh("systemctl", "show", "-p", "MainPID", "--value", unit).stdout.strip())


def service(name, ensure, **extra):
    text = f"- service:\n    name: {name}\n    ensure: {ensure}\n"
    for k, v in extra.items():
        text += f"    {k}: {json.dumps(v)}\n"
    return text


@pytest.fixture(scope="module")
def box(tmp_path_factory):
    if not os.path.exists(PYZ):
        pytest.fail(f"{PYZ} missing: run `make pyz` (make test-systemd does)")
    root = roots.ensure_root("bookworm", flavour="systemd")
    ct = Container(root, f"ccmsd{os.getpid()}", str(tmp_path_factory.mktemp("systemd")),
                   binds=[f"{os.path.dirname(PYZ)}:/ccm"])
    ct.boot()
    try:
        ct.write("/ccmwrap/systemctl", f'#!/bin/sh\necho "$*" >>{LOG}\nexec /bin/systemctl "$@"\n', 0o755)
        ct.write("/etc/systemd/system/ccm-sleep.service", SLEEP_UNIT.format(extra=""))
        ct.write("/etc/systemd/system/ccm-other.service", SLEEP_UNIT.format(extra=""))
        ct.write("/etc/systemd/system/ccm-static.service", STATIC_UNIT)
        ct.write("/etc/systemd/system/ccm-tpl@.service", SLEEP_UNIT.format(extra=" (%i)"))
        ct.write("/lib/systemd/system/ccm-vendor.service", SLEEP_UNIT.format(extra=""))
        ct.write("/etc/systemd/system/demo.service", SLEEP_UNIT.format(extra=""))
        ct.write("/etc/systemd/system/ccm-aliased.service", ALIASED_UNIT)
        b = Box(ct)
        b.sh("systemctl", "daemon-reload")
        b.sh("systemctl", "mask", "ccm-vendor")
        yield b
    finally:
        ct.stop()


def fixture_check(name, text):
    path = os.path.join(FIXTURES, name)
    if os.environ.get("CCM_RECORD_FIXTURES") == "1":
        with open(path, "wb") as fh:
            fh.write(text.encode())
    with open(path, "rb") as fh:
        assert fh.read().decode() == text, f"{name} differs from the real output"


def show(box, *units):
    r = box.sh("systemctl", "show", f"--property={PROPERTIES}", *units)
    return r.stdout


def test_running_stopped_enable_disable(box):
    ev = box.apply(service("ccm-sleep", "running", enable=True))
    assert ev[0]["changed"] and ev[0]["provider"] == "systemd"
    assert (box.active("ccm-sleep"), box.enabled("ccm-sleep")) == ("active", "enabled")
    fixture_check("show-active-enabled.txt", show(box, "ccm-sleep"))
    ev = box.apply(service("ccm-sleep", "running", enable=True))
    assert not ev[0]["changed"] and ev[0]["status"]["stable"]
    assert [c[0] for c in box.calls()] == ["show"], "one show, nothing else, for a steady unit"
    ev = box.apply(service("ccm-sleep", "stopped", enable=False))
    assert ev[0]["changed"]
    assert (box.active("ccm-sleep"), box.enabled("ccm-sleep")) == ("inactive", "disabled")
    fixture_check("show-inactive-disabled.txt", show(box, "ccm-sleep"))
    assert not box.apply(service("ccm-sleep", "stopped", enable=False))[0]["changed"]


def test_static_and_template_units(box):
    ev = box.apply(service("ccm-static", "running", enable=True) + service("ccm-tpl@one", "running", enable=True))
    assert ev[0]["changed"] and ev[1]["changed"]
    assert (box.active("ccm-static"), box.enabled("ccm-static")) == ("active", "static")
    assert (box.active("ccm-tpl@one"), box.enabled("ccm-tpl@one")) == ("active", "enabled")
    fixture_check("show-static-and-template.txt", show(box, "ccm-static", "ccm-tpl@one"))
    ev = box.apply(service("ccm-static", "running", enable=True) + service("ccm-tpl@one", "running", enable=True))
    assert not ev[0]["changed"] and not ev[1]["changed"]
    assert [c[0] for c in box.calls()] == ["show"], "one batched show for both units"
    ev = box.apply(service("ccm-static", "stopped") + service("ccm-tpl@one", "stopped", enable=False))
    assert box.active("ccm-static") == "inactive" and box.enabled("ccm-tpl@one") == "disabled"


def test_masked_unit(box):
    fixture_check("show-masked.txt", show(box, "ccm-vendor"))
    ev = box.apply(service("ccm-vendor", "stopped", enable=False))
    assert not ev[0]["changed"] and ev[0]["status"]["metadata"]["enabled"] is False
    ev = box.apply(service("ccm-vendor", "running"), check=False)
    assert ev[0]["failed"]
    assert ev[0]["error"] == ["failed to reach desired state: running: service is stopped, expected running "
                              "(systemctl start --system ccm-vendor exited 1: "
                              "Failed to start ccm-vendor.service: Unit ccm-vendor.service is masked.)"]


def test_unknown_unit_is_not_found(box):
    fixture_check("show-not-found.txt", show(box, "ccm-no-such-unit"))
    ev = box.apply(service("ccm-no-such-unit", "running") + service("ccm-sleep", "stopped"), check=False)
    assert ev[0]["error"] == ["service ccm-no-such-unit not found: systemd has no unit ccm-no-such-unit.service"]
    assert not ev[1]["failed"]
    r = box.ccm("status", "service", "ccm-no-such-unit", check=False)
    assert r.returncode != 0 and "service ccm-no-such-unit not found" in r.stderr
    assert "invalid systemctl is-enabled output" not in r.stderr


def test_restart_on_subscribe_changes_main_pid(box):
    resources = ("- file:\n    name: /etc/ccm-sleep.conf\n    ensure: present\n    content: '{c}'\n"
                 "    owner: root\n    group: root\n    mode: '0644'\n"
                 + service("ccm-sleep", "running", subscribe=["file#/etc/ccm-sleep.conf"]))
    box.apply(resources.format(c="one"))
    pid = box.main_pid("ccm-sleep")
    assert pid > 0
    ev = box.apply(resources.format(c="two"))
    assert ev[0]["changed"] and ev[1]["refreshed"]
    assert box.main_pid("ccm-sleep") not in (0, pid), "restarted: a new MainPID"
    assert ["restart", "--system", "ccm-sleep"] in box.calls()
    pid = box.main_pid("ccm-sleep")
    ev = box.apply(resources.format(c="two"))
    assert not ev[1]["refreshed"] and box.main_pid("ccm-sleep") == pid


def test_daemon_reload_once_per_run_after_unit_files_changed(box):
    both = service("ccm-sleep", "running") + service("ccm-other", "running") + service("ccm-static", "stopped")
    box.apply(both)
    assert not any(c == ["daemon-reload"] for c in box.calls()), "nothing changed on disk: no reload"
    for unit in ("ccm-sleep", "ccm-other"):
        box.ct.write(f"/etc/systemd/system/{unit}.service", SLEEP_UNIT.format(extra=" (edited)"))
    fixture_check("show-need-daemon-reload.txt", show(box, "ccm-sleep", "ccm-other"))
    ev = box.apply(both)
    assert not any(e["changed"] for e in ev)
    calls = box.calls()
    assert calls.count(["daemon-reload"]) == 1, calls
    assert [c[0] for c in calls] == ["show", "daemon-reload", "show"], calls
    fixture_check("show-need-daemon-reload-after.txt", show(box, "ccm-sleep", "ccm-other"))
    assert "(edited)" in box.sh("systemctl", "show", "-p", "Description", "ccm-other").stdout
    box.apply(both)
    assert [c[0] for c in box.calls()] == ["show"]


def test_new_unit_file_needs_no_reload(box):
    box.ct.write("/etc/systemd/system/ccm-new.service", SLEEP_UNIT.format(extra=""))
    ev = box.apply(service("ccm-new", "running", enable=True))
    assert ev[0]["changed"] and box.active("ccm-new") == "active" and box.enabled("ccm-new") == "enabled"


def test_batch_answers_equal_per_unit_answers(box):
    box.sh("systemctl", "enable", "ccm-aliased")
    assert box.enabled("ccm-alias") == "alias"
    fixture_check("show-alias-name.txt", show(box, "ccm-alias"))
    units = ["ccm-sleep", "ccm-static", "ccm-tpl@one", "ccm-vendor", "dbus", "systemd-journald", "getty@tty1",
             "ccm-alias", "ccm-aliased"]
    batch = box.apply("".join(service(u, "stopped") for u in units), noop=True)
    assert [c[0] for c in box.calls()] == ["show", "is-enabled"], "is-enabled only for the alias name"
    for unit, ev in zip(units, batch):
        alone = json.loads(box.ccm("status", "service", unit, "--json").stdout)
        assert ev["status"]["metadata"] == alone, unit


def test_after_a_change_show_asks_a_growing_window_not_every_unit(box):
    """A run whose first unit changes: one show of every unit, then (the cache is dropped
    after the change) the changed unit alone, then 1, 2, 4 of the following units; the
    steady run after it asks once. Before: each show after a change asked every unit
    again (a first run of 30 changing units took 5x as long as one show per unit)."""
    units = [f"ccm-w{i}" for i in range(8)]
    for unit in units:
        box.ct.write(f"/etc/systemd/system/{unit}.service", SLEEP_UNIT.format(extra=""))
    box.sh("systemctl", "daemon-reload")
    box.sh("systemctl", "start", *units[1:])
    box.sh("systemctl", "stop", units[0])
    resources = "".join(service(u, "running") for u in units)
    ev = box.apply(resources)
    assert [e["changed"] for e in ev] == [True] + [False] * 7
    shows = [c[2:] for c in box.calls() if c[0] == "show"]
    assert shows == [units, units[:1], units[1:2], units[2:4], units[4:8]], shows
    assert [c[0] for c in box.calls()] == ["show", "start", "show", "show", "show", "show"]
    ev = box.apply(resources)
    assert not any(e["changed"] for e in ev)
    assert [c[2:] for c in box.calls()] == [units]
    box.sh("systemctl", "stop", *units)


def test_readme_shell_example_inside_the_container(box):
    box.ct.write("/usr/local/bin/ccm", '#!/bin/sh\nexec python3 /ccm/ccm.pyz "$@"\n', 0o755)
    box.ct.write("/tmp/example.sh", readme_block())
    box.sh("systemctl", "start", "demo")
    before = box.main_pid("demo")
    r = box.ct.run(["sh", "/tmp/example.sh"], env={"HOME": "/root", "TMPDIR": "/tmp"})
    assert r.returncode == 0, r.stdout + r.stderr
    after = box.main_pid("demo")
    assert open(box.ct.path("/etc/demo.conf")).read() == "port=8080"
    assert before and after and before != after, "the file change restarted the service"
    assert box.enabled("demo") == "enabled"
    assert "service#demo refreshed" in r.stdout and "Refreshed Resources: 2" in r.stdout
    r = box.ct.run(["sh", "/tmp/example.sh"], env={"HOME": "/root", "TMPDIR": "/tmp"})
    assert r.returncode == 0, r.stdout + r.stderr
    assert box.main_pid("demo") == after, "nothing changed, nothing restarted"
    assert "service#demo stable" in r.stdout
