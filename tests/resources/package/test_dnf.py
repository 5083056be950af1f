"""dnf provider: recorded rpm/dnf output replayed, argv exact, no extra environment."""
from __future__ import annotations

import pytest

from ccm.model.errors import ProviderError
from ccm.resources.package import dnf
from ccm.resources.package.dnf import DnfFactory, DnfProvider, parse_check_update, parse_rpm_q

from tests.resources.package.replay import NullLock, ReplayRunner, fixture

FORMAT = "%{NAME} %|EPOCH?{%{EPOCH}}:{0}| %{VERSION} %{RELEASE} %{ARCH}"


def rpm_q(pkg):
    return ["rpm", "-q", pkg, "--queryformat", FORMAT]


def provider(runner):
    return DnfProvider(runner, None, lock=NullLock())


@pytest.mark.parametrize("name,ensure,version,epoch", [
    ("dnf/rpm_q.txt", "5.8", "5.8-9.el9", "0"),
    ("dnf/rpm_q_001.txt", "0.0.1", "0.0.1-9.el9", "0"),
    ("dnf/rpm_q_623.txt", "6.2.3", "6.2.3-9.el9", "0"),
])
def test_status_installed(name, ensure, version, epoch):
    runner = ReplayRunner({}).on(rpm_q("zsh"), (fixture(name), "", 0))
    st = provider(runner).status("zsh")
    assert runner.calls == [rpm_q("zsh")] and runner.envs == [{}]
    assert st.ensure == ensure
    assert st.metadata == {"name": "zsh", "version": version, "arch": "x86_64", "provider": "dnf",
                           "extended": {"epoch": epoch, "release": "9.el9"}}
    assert st.internal["versions"] == [ensure, version, f"{epoch}:{version}"]


def test_status_absent():
    runner = ReplayRunner({}).on(rpm_q("zsh"), (fixture("dnf/rpm_q_absent.txt"), "", 1))
    st = provider(runner).status("zsh")
    assert st.ensure == "absent"
    assert st.metadata["version"] == "absent"


def test_unparseable_rpm_output():
    with pytest.raises(ProviderError) as err:
        parse_rpm_q("zsh", "zsh 5.8 x86_64", 0)
    assert str(err.value).startswith("failed to parse rpm -q output for zsh")


def test_install_present_version_and_failure():
    runner = ReplayRunner({})
    runner.on(["dnf", "install", "-y", "tcsh"], (fixture("dnf/dnf_install_zsh.txt"), "", 0))
    runner.on(["dnf", "install", "-y", "tcsh-6.22.03"], ("", "", 0))
    runner.on(["dnf", "install", "-y", "nope"], ("", "Error: Unable to find a match: nope\n", 1))
    p = provider(runner)
    p.install("tcsh", "present")
    p.install("tcsh", "latest")
    p.install("tcsh", "6.22.03")
    with pytest.raises(ProviderError) as err:
        p.install("nope", "present")
    assert str(err.value) == 'failed to Install package "nope", dnf exited 1: Error: Unable to find a match: nope'
    assert runner.calls[:3] == [["dnf", "install", "-y", "tcsh"], ["dnf", "install", "-y", "tcsh"],
                                ["dnf", "install", "-y", "tcsh-6.22.03"]]


def test_upgrade_latest_uses_dnf_upgrade_and_versions_use_install():
    runner = ReplayRunner({})
    runner.on(["dnf", "upgrade", "-y", "tcsh"], ("", "", 0))
    runner.on(["dnf", "install", "-y", "tcsh-6.22.04"], ("", "", 0))
    p = provider(runner)
    p.upgrade("tcsh", "latest")
    p.upgrade("tcsh", "6.22.04")
    assert runner.calls == [["dnf", "upgrade", "-y", "tcsh"], ["dnf", "install", "-y", "tcsh-6.22.04"]]


def test_downgrade_and_remove():
    runner = ReplayRunner({})
    runner.on(["dnf", "downgrade", "-y", "tcsh-6.22.02"], ("", "", 1))
    runner.on(["dnf", "remove", "-y", "tcsh"], (fixture("dnf/dnf_remove.txt"), "", 0), ("", "", 1))
    p = provider(runner)
    with pytest.raises(ProviderError) as err:
        p.downgrade("tcsh", "6.22.02")
    assert str(err.value) == "failed to Downgrade tcsh, dnf exited 1"
    p.uninstall("tcsh")
    with pytest.raises(ProviderError) as err:
        p.uninstall("tcsh")
    assert str(err.value) == "failed to Uninstall tcsh, dnf exited 1"


# `dnf -q check-update` output below is synthesised (not recorded): name.arch, EVR, repo.
CHECK_UPDATE = "\nzsh.x86_64                          5.8-10.el9                          baseos\n"


def test_available_newer_and_up_to_date():
    runner = ReplayRunner({})
    runner.on(["dnf", "-q", "check-update", "zsh"], (CHECK_UPDATE, "", 100), ("", "", 0))
    runner.on(rpm_q("zsh"), (fixture("dnf/rpm_q.txt"), "", 0))
    p = provider(runner)
    assert p.available("zsh") == "5.8-10.el9"
    assert p.available("zsh") == "0:5.8-9.el9"    # nothing newer: the installed EVR


def test_available_unknown_on_error():
    runner = ReplayRunner({}).on(["dnf", "-q", "check-update", "zsh"], ("", "Error: Failed to download metadata", 1))
    assert provider(runner).available("zsh") is None


def test_parse_check_update():
    assert parse_check_update("zsh", CHECK_UPDATE) == "5.8-10.el9"
    assert parse_check_update("zsh-html", CHECK_UPDATE) is None
    assert parse_check_update("vim", "vim-enhanced.x86_64 2:9.0-1.el9 appstream\nvim.x86_64 2:9.1-1.el9 appstream\n") == "2:9.1-1.el9"


@pytest.mark.parametrize("tools,family,usable,priority", [
    ({"dnf", "rpm"}, "rhel", True, 1),
    ({"dnf", "rpm"}, "fedora", True, 1),
    ({"dnf", "rpm"}, "debian", True, 2),
    ({"dnf", "rpm"}, "", True, 1),
    ({"dnf"}, "rhel", False, 1),
])
def test_factory(monkeypatch, tools, family, usable, priority):
    monkeypatch.setattr(dnf, "on_path", lambda t: t in tools)
    facts = {"host": {"info": {"platformFamily": family}}}
    assert tuple(DnfFactory().is_manageable(facts, None)) == (usable, priority)
