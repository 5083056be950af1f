"""apt provider: recorded dpkg-query/apt-cache/apt-get output replayed, argv and env exact."""
from __future__ import annotations

import pytest

from ccm.model.errors import ProviderError
from ccm.resources.package import apt
from ccm.resources.package.apt import (AptFactory, AptProvider, apt_errors, parse_candidate, parse_dpkg_query,
                                       parse_version_table)

from tests.resources.package.replay import NullLock, ReplayRunner, fixture

ENV = {"DEBIAN_FRONTEND": "noninteractive", "APT_LISTBUGS_FRONTEND": "none", "APT_LISTCHANGES_FRONTEND": "none"}
FORMAT = "-f=${Package} ${Version} ${Architecture} ${db:Status-Status}"
INSTALL = ["apt-get", "install", "-y", "-q", "-o", "DPkg::Options::=--force-confold"]


def status_argv(pkg):
    return ["dpkg-query", "-W", FORMAT, pkg]


def provider(runner):
    lock = NullLock()
    return AptProvider(runner, None, lock=lock), lock


# --- parsing -------------------------------------------------------------------------------

def test_status_installed_and_epoch():
    runner = ReplayRunner(ENV)
    runner.on(status_argv("zsh"), (fixture("apt/dpkg_query_installed.txt"), "", 0))
    runner.on(status_argv("vim"), (fixture("apt/dpkg_query_epoch.txt"), "", 0))
    p, lock = provider(runner)
    st = p.status("zsh")
    assert st.ensure == "5.9-8+b18"
    assert st.to_dict()["metadata"] == {"name": "zsh", "version": "5.9-8+b18", "arch": "amd64",
                                        "provider": "apt", "extended": {"status": "installed"}}
    assert st.to_dict()["protocol"] == "io.choria.ccm.v1.resource.package.state"
    assert p.status("vim").ensure == "2:9.1.1230-2"
    assert runner.calls == [status_argv("zsh"), status_argv("vim")]
    assert lock.operations == ["dpkg-query zsh", "dpkg-query vim"]


def test_status_absent_from_recorded_stderr():
    runner = ReplayRunner(ENV).on(status_argv("nonexistent-pkg"), ("", fixture("apt/dpkg_query_absent.txt"), 1))
    st, _ = provider(runner)
    state = st.status("nonexistent-pkg")
    assert state.ensure == "absent"
    assert state.metadata == {"name": "nonexistent-pkg", "version": "absent", "provider": "apt",
                              "extended": {"status": "unknown"}}


@pytest.mark.parametrize("stdout,code,ensure,status", [
    ("hello 2.10-3 amd64 config-files", 0, "absent", "config-files"),
    ("hello 2.10-3 amd64 half-installed", 0, "absent", "half-installed"),
    ("hello 2.10-3 amd64 unpacked", 0, "absent", "unpacked"),
    ("hello   not-installed", 0, "absent", "not-installed"),
    ("libc6 2.36-9 amd64 installedlibc6 2.36-9 i386 installed", 0, "absent", "unknown"),  # multi-arch
    ("hello 2.10-3 amd64 installed\n", 0, "2.10-3", "installed"),
    ("hello 2.10-3 amd64 installed", 1, "absent", "installed"),
])
def test_parse_dpkg_query_states(stdout, code, ensure, status):
    st = parse_dpkg_query("hello", stdout, code)
    assert st.ensure == ensure
    assert st.metadata["extended"]["status"] == status


def test_candidate_parsing():
    assert parse_candidate("zsh", fixture("apt/apt_cache_policy.txt")) == "5.9-8+b18"
    assert parse_version_table(fixture("apt/apt_cache_policy.txt")) == ["5.9-8+b18"]
    with pytest.raises(ProviderError) as err:
        parse_candidate("nonexistent-pkg", fixture("apt/apt_cache_policy_absent.txt"))
    assert str(err.value).startswith("could not find Candidate: line in apt-cache policy output for nonexistent-pkg")


def test_version_table_with_two_versions():
    text = ("rtpengine-iptables:\n  Installed: (none)\n  Candidate: 10.5.3.5-1+deb12u1\n  Version table:\n"
            "     10.5.3.5-1+deb12u1 500\n        500 http://deb.debian.org/debian-security bookworm-security/main amd64 Packages\n"
            "     10.5.3.5-1 500\n        500 http://deb.debian.org/debian bookworm/main amd64 Packages\n")
    assert parse_version_table(text) == ["10.5.3.5-1+deb12u1", "10.5.3.5-1"]


def test_apt_errors():
    assert apt_errors(fixture("apt/apt_get_install_fail_stderr.txt")) == "E: Unable to locate package nonexistent-pkg"
    assert apt_errors("W: something\nE: one\nE: two\n") == "E: one; E: two"
    assert apt_errors("") == ""


# --- operations ----------------------------------------------------------------------------

def test_install_present_exact_argv_env():
    runner = ReplayRunner(ENV).on(INSTALL + ["zsh"], (fixture("apt/apt_get_install.txt"), "", 0))
    p, lock = provider(runner)
    p.install("zsh", "present")
    assert runner.calls == [INSTALL + ["zsh"]]
    assert runner.envs == [ENV]
    assert lock.operations == ["apt-get install zsh (present)"]


def test_install_latest_uses_candidate_under_one_lock_hold():
    runner = ReplayRunner(ENV)
    runner.on(["apt-cache", "policy", "zsh"], (fixture("apt/apt_cache_policy.txt"), "", 0))
    runner.on(INSTALL + ["zsh=5.9-8+b18"], (fixture("apt/apt_get_install.txt"), "", 0))
    p, lock = provider(runner)
    p.install("zsh", "latest")
    assert runner.calls == [["apt-cache", "policy", "zsh"], INSTALL + ["zsh=5.9-8+b18"]]
    assert lock.operations[0] == "apt-get install zsh (latest)"   # outer hold covers both


def test_install_latest_without_candidate_is_a_clear_error():
    policy = "hello:\n  Installed: (none)\n  Candidate: (none)\n  Version table:\n"
    runner = ReplayRunner(ENV).on(["apt-cache", "policy", "hello"], (policy, "", 0))
    p, _ = provider(runner)
    with pytest.raises(ProviderError) as err:
        p.install("hello", "latest")
    assert str(err.value) == 'package "hello" has no installation candidate: apt-cache policy reports Candidate: (none)'
    assert all("hello=(none)" not in c for call in runner.calls for c in call)


def test_install_version_and_downgrade_allow_downgrades():
    argv = INSTALL + ["--allow-downgrades", "zsh=5.9-8"]
    runner = ReplayRunner(ENV).on(argv, ("", "", 0))
    p, _ = provider(runner)
    p.install("zsh", "5.9-8")
    p.downgrade("zsh", "5.9-8")
    p.upgrade("zsh", "5.9-8")
    assert runner.calls == [argv, argv, argv]


def test_install_failure_carries_apts_error_line():
    runner = ReplayRunner(ENV).on(INSTALL + ["nonexistent-pkg"], (fixture("apt/apt_get_install_fail_stdout.txt"),
                                                                  fixture("apt/apt_get_install_fail_stderr.txt"), 100))
    p, _ = provider(runner)
    with pytest.raises(ProviderError) as err:
        p.install("nonexistent-pkg", "present")
    first, *tail = str(err.value).splitlines()
    assert first == ('failed to install package "nonexistent-pkg", apt-get exited 100: '
                     'E: Unable to locate package nonexistent-pkg')
    assert tail and tail[0].startswith("stderr") and any("Reading package lists" in ln for ln in tail)


def test_uninstall_and_failure():
    runner = ReplayRunner(ENV)
    runner.on(["apt-get", "-q", "-y", "remove", "zsh"], (fixture("apt/apt_get_remove.txt"), "", 0))
    runner.on(["apt-get", "-q", "-y", "remove", "nonexistent-pkg"],
              (fixture("apt/apt_get_remove_fail_stdout.txt"), fixture("apt/apt_get_remove_fail_stderr.txt"), 100))
    p, _ = provider(runner)
    p.uninstall("zsh")
    with pytest.raises(ProviderError) as err:
        p.uninstall("nonexistent-pkg")
    first, *tail = str(err.value).splitlines()
    assert first == "failed to uninstall nonexistent-pkg: E: Unable to locate package nonexistent-pkg"
    assert tail   # the output tail follows


def test_available():
    runner = ReplayRunner(ENV).on(["apt-cache", "policy", "zsh"], (fixture("apt/apt_cache_policy.txt"), "", 0))
    runner.on(["apt-cache", "policy", "gone"], ("gone:\n  Installed: 1.0\n  Candidate: (none)\n", "", 0))
    p, _ = provider(runner)
    assert p.available("zsh") == "5.9-8+b18"
    assert p.available("gone") is None


def test_runner_error_is_a_provider_error():
    class Broken:
        def run(self, argv, **kw):
            from ccm.model.runner import CommandResult
            return CommandResult(argv=argv, exit_code=-1, error='exec: "dpkg-query": executable file not found in $PATH')

    with pytest.raises(ProviderError) as err:
        AptProvider(Broken(), None, lock=NullLock()).status("zsh")
    assert "executable file not found" in str(err.value)


def test_never_runs_apt_get_update():
    import inspect

    source = inspect.getsource(apt)
    assert '"update"' not in source and "'update'" not in source


# --- selection -----------------------------------------------------------------------------

@pytest.mark.parametrize("tools,family,usable,priority", [
    ({"apt-get", "apt-cache", "apt-mark", "dpkg-query"}, "debian", True, 1),
    ({"apt-get", "apt-cache", "apt-mark", "dpkg-query"}, "", True, 1),
    ({"apt-get", "apt-cache", "apt-mark", "dpkg-query"}, "rhel", True, 2),
    ({"apt-get", "apt-cache", "dpkg-query"}, "debian", False, 1),   # apt-mark missing
])
def test_factory(monkeypatch, tools, family, usable, priority):
    monkeypatch.setattr(apt, "on_path", lambda t: t in tools)
    facts = {"host": {"info": {"platformFamily": family}}}
    assert tuple(AptFactory().is_manageable(facts, None)) == (usable, priority)


# --- recorded on Debian 12 (see tests/fixtures/apt/README.md) -----------------------------

def test_bookworm_two_versions_policy():
    text = fixture("apt/bookworm_apt_cache_policy_two_versions.txt")
    assert parse_candidate("rtpengine-iptables", text) == "10.5.3.5-1+deb12u1"
    assert parse_version_table(text) == ["10.5.3.5-1+deb12u1", "10.5.3.5-1"]


def test_bookworm_no_candidate():
    runner = ReplayRunner(ENV).on(["apt-cache", "policy", "mail-transport-agent"],
                                  (fixture("apt/bookworm_apt_cache_policy_no_candidate.txt"), "", 0))
    p, _ = provider(runner)
    assert p.available("mail-transport-agent") is None
    with pytest.raises(ProviderError) as err:
        p.install("mail-transport-agent", "latest")
    assert str(err.value) == ('package "mail-transport-agent" has no installation candidate: '
                              'apt-cache policy reports Candidate: (none)')
    assert runner.calls == [["apt-cache", "policy", "mail-transport-agent"]] * 2


def test_bookworm_version_not_found():
    argv = INSTALL + ["--allow-downgrades", "hello=9.9-9"]
    runner = ReplayRunner(ENV).on(argv, (fixture("apt/bookworm_apt_get_install_version_not_found_stdout.txt"),
                                         fixture("apt/bookworm_apt_get_install_version_not_found_stderr.txt"), 100))
    p, _ = provider(runner)
    with pytest.raises(ProviderError) as err:
        p.install("hello", "9.9-9")
    first = str(err.value).splitlines()[0]
    assert first == "failed to install package \"hello\", apt-get exited 100: E: Version '9.9-9' for 'hello' was not found"


def test_bookworm_unknown_package_status():
    runner = ReplayRunner(ENV).on(status_argv("hello"), ("", fixture("apt/bookworm_dpkg_query_unknown_stderr.txt"), 1))
    p, _ = provider(runner)
    assert p.status("hello").ensure == "absent"
