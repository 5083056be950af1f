"""dnf provider: recorded rpm/dnf output replayed, argv exact, no extra environment."""
from __future__ import annotations

import pytest

from ccm.apply.runcache import RunCache
from ccm.model.errors import ProviderError
from ccm.resources.package import dnf
from ccm.resources.package.dnf import QUERY_ALL, DnfFactory, DnfProvider, parse_check_update, parse_rpm_q, parse_rpm_qa

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


@pytest.mark.parametrize("stdout", [
    fixture("dnf/rpm_q_absent.txt"),                  # five words, but no package: never parsed as one
    fixture("dnf/rpm_q.txt") + "\n",                  # the whole output must be the one line
    fixture("dnf/rpm_q.txt") + "zsh 0 5.9 1.el9 x86_64",
])
def test_only_the_whole_line_parses(stdout):
    with pytest.raises(ProviderError, match="failed to parse rpm -q output for zsh"):
        parse_rpm_q("zsh", stdout, 0)


def test_only_rpms_own_not_installed_is_absent():
    assert parse_rpm_q("zsh", fixture("dnf/rpm_q_absent.txt"), 1).ensure == "absent"
    assert parse_rpm_q("ccmtest", "package ccmtest is not installed\n", 1).ensure == "absent"
    with pytest.raises(ProviderError) as err:
        parse_rpm_q("zsh", "", 1, "error: cannot open Packages database in /root/.rpmdb\n")
    assert str(err.value) == "rpm -q zsh exited 1: error: cannot open Packages database in /root/.rpmdb"
    with pytest.raises(ProviderError, match="rpm -q zsh exited 2"):
        parse_rpm_q("zsh", fixture("dnf/rpm_q_absent.txt"), 2)


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


# Recorded from real dnf 4.14 (tests/resources/package/test_dnf_real.py, CCM_RECORD_FIXTURES=1).
CHECK_UPDATE = fixture("dnf/check_update_q_available.txt")
UP_TO_DATE = fixture("dnf/check_update_q_up_to_date.txt")
CCMTEST_11 = "ccmtest 0 1.1 1 noarch"


def test_available_newer_and_up_to_date():
    runner = ReplayRunner({})
    runner.on(["dnf", "-q", "check-update", "ccmtest"], (CHECK_UPDATE, "", 100), (UP_TO_DATE, "", 0))
    runner.on(rpm_q("ccmtest"), (CCMTEST_11, "", 0))
    p = provider(runner)
    assert p.available("ccmtest") == "1.1-1"
    assert p.available("ccmtest") == "0:1.1-1"    # nothing newer: the installed EVR


def test_available_when_not_installed_passes_rpms_real_exit_code():
    # check-update says 0 for a package that is not installed (recorded: 42-*.txt)
    runner = ReplayRunner({})
    runner.on(["dnf", "-q", "check-update", "ccmtest"], (UP_TO_DATE, "", 0))
    runner.on(rpm_q("ccmtest"), ("package ccmtest is not installed\n", "", 1))
    assert provider(runner).available("ccmtest") is None


def test_available_unknown_on_error():
    runner = ReplayRunner({}).on(["dnf", "-q", "check-update", "zsh"], ("", "Error: Failed to download metadata", 1))
    assert provider(runner).available("zsh") is None


RPM_QA = fixture("dnf/rpm_qa_two.txt")


def test_one_rpm_qa_answers_every_package_of_the_run_until_something_changes():
    runner = ReplayRunner({})
    runner.on(list(QUERY_ALL), (RPM_QA, "", 0))
    runner.on(["dnf", "remove", "-y", "ccmtest"], ("", "", 0))
    cache = RunCache([("package", "ccmtest"), ("package", "ccmepoch"), ("package", "nothere")])
    p = provider(runner)
    p.use_run_cache(cache)
    assert p.status("ccmtest").ensure == "1.1"
    epoch = p.status("ccmepoch")
    assert epoch.internal["versions"] == ["2.5", "2.5-7.test", "3:2.5-7.test"]
    assert p.status("ccmepoch-2.5-7.test").ensure == "2.5"    # rpm -q's N-V-R spelling
    assert p.status("nothere").ensure == "absent"
    assert runner.calls == [list(QUERY_ALL)]
    p.uninstall("ccmtest")
    p.status("ccmtest")
    assert runner.calls == [list(QUERY_ALL), ["dnf", "remove", "-y", "ccmtest"], list(QUERY_ALL)]


def test_run_cache_not_used_for_a_single_package_or_ambiguous_names():
    runner = ReplayRunner({})
    runner.on(rpm_q("zsh"), (fixture("dnf/rpm_q.txt"), "", 0))
    p = provider(runner)
    p.use_run_cache(RunCache([("package", "zsh")]))
    assert p.status("zsh").ensure == "5.8"
    assert runner.calls == [rpm_q("zsh")]
    two = "glibc 0 2.34 60.el9 x86_64\nglibc 0 2.34 60.el9 i686\n"
    assert parse_rpm_qa(two)["glibc"] == two.splitlines()
    runner = ReplayRunner({})
    runner.on(list(QUERY_ALL), (two, "", 0))
    runner.on(rpm_q("glibc"), ("glibc 0 2.34 60.el9 x86_64", "", 0))
    p = provider(runner)
    p.use_run_cache(RunCache([("package", "glibc"), ("package", "zsh")]))
    assert p.status("glibc").metadata["arch"] == "x86_64"
    assert p.status("glibc.i686").metadata["arch"] == "i686"
    assert runner.calls == [list(QUERY_ALL), rpm_q("glibc")]


def test_parse_check_update():
    assert parse_check_update("ccmtest", CHECK_UPDATE) == "1.1-1"
    assert parse_check_update("ccmtest-html", CHECK_UPDATE) is None
    assert parse_check_update("ccmtest", UP_TO_DATE) is None
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
