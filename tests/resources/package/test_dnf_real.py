"""Real dnf and rpm (Debian's packages), isolated under an ``--installroot`` (marker ``dnf``, root).

RPMs are built with ``rpmbuild`` at test time (``ccmtest`` 1.0 and 1.1, ``ccmepoch`` with
Epoch 3) into a ``file://`` repository (``gpgcheck=0``, ``metadata_expire=0``). ccm finds
the tools through a wrapper directory put in front of its ``PATH`` (the one lookup rule
of ``ccm.model.runner``), whose ``dnf``/``rpm`` add ``--installroot``/``--root`` and pin
``HOME`` (Debian's rpm keeps its database in ``~/.rpmdb``); the provider's argv is the
spec's, unchanged. ``provider: dnf`` is forced (apt wins the tie on a Debian host).
Nothing outside the temporary directory is touched.

With ``CCM_RECORD_FIXTURES=1`` the outputs the replay tests use are written again into
``tests/fixtures/dnf/`` (otherwise the real output is compared with them byte for byte).
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import textwrap

import pytest

from ccm.resources.package.dnf import QUERY_ALL, QUERY_FORMAT
from tests import kit

pytestmark = [
    pytest.mark.dnf,
    pytest.mark.skipif(os.geteuid() != 0, reason="needs root"),
    pytest.mark.skipif(not all(shutil.which(t) for t in ("dnf", "rpm", "rpmbuild", "createrepo_c")),
                       reason="needs dnf, rpm, rpmbuild and createrepo_c (make test-dnf installs them)"),
]

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
FIXTURES = os.path.join(REPO, "tests", "fixtures", "dnf")
HOST_RPMDB_EXISTED = os.path.exists("/root/.rpmdb")
CHILD_ENV = {"PATH": "/usr/bin:/bin:/usr/sbin:/sbin:/usr/local/bin:/usr/local/sbin", "LANG": "C", "LC_ALL": "C"}

SPEC = """\
Name:           %(name)s
%(epoch)sVersion:        %%{ver}
Release:        %(release)s
Summary:        ccm test package
License:        MIT
BuildArch:      noarch

%%description
Tiny package for the ccm dnf provider tests.

%%install
mkdir -p %%{buildroot}/usr/share/%(name)s
echo %%{version} > %%{buildroot}/usr/share/%(name)s/VERSION

%%files
%%dir /usr/share/%(name)s
/usr/share/%(name)s/VERSION
"""


def build_rpm(work, name, version, release="1", epoch=None):
    spec = os.path.join(work, f"{name}.spec")
    with open(spec, "w") as fh:
        fh.write(SPEC % {"name": name, "release": release, "epoch": f"Epoch:          {epoch}\n" if epoch else ""})
    subprocess.run(["rpmbuild", "-bb", "--quiet", "--define", f"_topdir {work}/rpmbuild", "--define", f"ver {version}",
                    spec], check=True, capture_output=True, env=dict(CHILD_ENV, HOME=work))


class Env:
    def __init__(self, work):
        self.work = work
        self.root = os.path.join(work, "root")
        self.bin = os.path.join(work, "bin")
        self.repo = os.path.join(work, "repo")

    def tool(self, *argv):
        """A tool through the wrappers, in the runner's environment (for recording and checks)."""
        exe = os.path.join(self.bin, argv[0])
        return subprocess.run([exe] + list(argv[1:]), capture_output=True, text=True, env=CHILD_ENV, cwd="/",
                              stdin=subprocess.DEVNULL, timeout=300)

    def installed(self, name):
        res = self.tool("rpm", "-q", name, "--queryformat", "%{EPOCH}:%{VERSION}-%{RELEASE}")
        return res.stdout.replace("(none):", "") if res.returncode == 0 else None

    def ccm(self, *args, check=True):
        env = {k: v for k, v in os.environ.items() if not k.startswith("CCM_")}
        env.update(PATH=f"{self.bin}:/usr/bin:/bin:/usr/sbin:/sbin", PYTHONPATH=REPO, HOME=self.work)
        return kit.ccm(*args, env=env, cwd=self.work, timeout=600, check=check)

    def apply(self, resources, *extra, check=True):
        path = os.path.join(self.work, "manifest.yaml")
        with open(path, "w") as fh:
            fh.write("ccm:\n  resources:\n" + textwrap.indent(resources, "    "))
        return self.ccm("apply", path, "--report", *extra, check=check)


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    e = Env(str(tmp_path_factory.mktemp("dnf")))
    for v in ("1.0", "1.1"):
        build_rpm(e.work, "ccmtest", v)
    build_rpm(e.work, "ccmepoch", "2.5", release="7.test", epoch=3)
    os.makedirs(e.repo)
    for dirpath, _dirs, files in os.walk(os.path.join(e.work, "rpmbuild", "RPMS")):
        for f in files:
            shutil.copy(os.path.join(dirpath, f), e.repo)
    subprocess.run(["createrepo_c", "-q", e.repo], check=True, capture_output=True)
    for d in ("etc/yum.repos.d", "etc/dnf/vars"):
        os.makedirs(os.path.join(e.root, d))
    with open(os.path.join(e.root, "etc/yum.repos.d/ccmtest.repo"), "w") as fh:
        fh.write(f"[ccmtest]\nname=ccmtest local\nbaseurl=file://{e.repo}\ngpgcheck=0\nenabled=1\nmetadata_expire=0\n")
    with open(os.path.join(e.root, "etc/dnf/vars/releasever"), "w") as fh:
        fh.write("1\n")   # no system-release package: silences dnf's warning
    os.makedirs(e.bin)
    for tool, flag in (("dnf", f"--installroot={e.root}"), ("rpm", f"--root {e.root}")):
        path = os.path.join(e.bin, tool)
        with open(path, "w") as fh:
            fh.write(f'#!/bin/sh\nHOME=/root exec /usr/bin/{tool} {flag} "$@"\n')
        os.chmod(path, 0o755)
    yield e
    # the installroot lives in the temporary directory: nothing on the host to restore


def fixture_check(env, name, res):
    """Record (CCM_RECORD_FIXTURES=1) or compare a real output with its replay fixture."""
    path = os.path.join(FIXTURES, name)
    if os.environ.get("CCM_RECORD_FIXTURES") == "1":
        with open(path, "wb") as fh:
            fh.write(res.stdout.encode())
    with open(path, "rb") as fh:
        assert fh.read().decode() == res.stdout, f"{name} differs from the real output"


def test_tools_through_the_wrappers(env):
    assert env.installed("ccmtest") is None
    res = env.tool("rpm", "-q", "ccmtest", "--queryformat", QUERY_FORMAT)
    assert (res.returncode, res.stdout) == (1, "package ccmtest is not installed\n")


def test_noop_changes_nothing(env):
    r = env.apply("- package:\n    name: ccmtest\n    ensure: present\n    provider: dnf\n", "--noop")
    assert "Would have installed version present" in r.stdout
    assert env.installed("ccmtest") is None


def test_pinned_version_then_up_and_down(env):
    r = env.apply("- package:\n    name: ccmtest\n    ensure: '1.0'\n    provider: dnf\n")
    assert env.installed("ccmtest") == "1.0-1"
    assert "Changed Resources: 1" in r.stdout
    r = env.apply("- package:\n    name: ccmtest\n    ensure: '1.0'\n    provider: dnf\n")
    assert env.installed("ccmtest") == "1.0-1" and "Stable Resources: 1" in r.stdout
    r = env.apply("- package:\n    name: ccmtest\n    ensure: 1.1-1\n    provider: dnf\n")   # up, V-R form
    assert env.installed("ccmtest") == "1.1-1" and "Changed Resources: 1" in r.stdout
    r = env.apply("- package:\n    name: ccmtest\n    ensure: '1.0'\n    provider: dnf\n")   # down
    assert env.installed("ccmtest") == "1.0-1" and "Changed Resources: 1" in r.stdout


def test_latest_when_an_update_exists_then_stable(env):
    assert env.installed("ccmtest") == "1.0-1"
    res = env.tool("dnf", "-q", "check-update", "ccmtest")
    assert res.returncode == 100
    fixture_check(env, "check_update_q_available.txt", res)
    r = env.apply("- package:\n    name: ccmtest\n    ensure: latest\n    provider: dnf\n")
    assert env.installed("ccmtest") == "1.1-1" and "Changed Resources: 1" in r.stdout
    res = env.tool("dnf", "-q", "check-update", "ccmtest")
    assert res.returncode == 0
    fixture_check(env, "check_update_q_up_to_date.txt", res)
    r = env.apply("- package:\n    name: ccmtest\n    ensure: latest\n    provider: dnf\n")
    assert "Stable Resources: 1" in r.stdout and env.installed("ccmtest") == "1.1-1"


def test_missing_version_and_unknown_package_fail_with_dnfs_own_error(env):
    def errors(manifest: str) -> list:
        r = env.apply(manifest, "--json", check=False)
        assert r.returncode != 0, r.stderr
        # each error's first line; dnf's output tail may follow it
        return [[m.splitlines()[0] for m in e["error"]] for e in json.loads(r.stdout)["events"]]

    # one manifest may not declare package#ccmtest twice (a load-time duplicate): two runs
    assert errors("- package:\n    name: ccmtest\n    ensure: '9.9'\n    provider: dnf\n"
                  "- package:\n    name: ccm-no-such-pkg\n    ensure: present\n    provider: dnf\n") == [
        ['failed to Install package "ccmtest", dnf exited 1: Error: Unable to find a match: ccmtest-9.9'],
        ['failed to Install package "ccm-no-such-pkg", dnf exited 1: Error: Unable to find a match: ccm-no-such-pkg'],
    ]
    assert errors("- package:\n    name: ccmtest\n    ensure: '0.5'\n    provider: dnf\n") == [
        ["failed to Downgrade ccmtest, dnf exited 1: Error: No packages marked for downgrade."],
    ]
    assert env.installed("ccmtest") == "1.1-1" and env.installed("ccm-no-such-pkg") is None


def test_epoch_package(env):
    r = env.apply("- package:\n    name: ccmepoch\n    ensure: 3:2.5-7.test\n    provider: dnf\n")
    assert env.installed("ccmepoch") == "3:2.5-7.test" and "Changed Resources: 1" in r.stdout
    for form in ("3:2.5-7.test", "2.5-7.test", "2.5"):   # every spelling a user may pin is stable
        r = env.apply(f"- package:\n    name: ccmepoch\n    ensure: '{form}'\n    provider: dnf\n")
        assert "Stable Resources: 1" in r.stdout, form


def test_status_command_and_one_rpm_query_for_the_whole_run(env):
    r = env.ccm("status", "package", "ccmepoch", "--provider", "dnf", "--json")
    assert json.loads(r.stdout) == {"name": "ccmepoch", "version": "2.5-7.test", "arch": "noarch", "provider": "dnf",
                                    "extended": {"epoch": "3", "release": "7.test"}}
    fixture_check(env, "rpm_qa_two.txt", env.tool("rpm", *QUERY_ALL[1:]))
    r = env.ccm("status", "package", "ccm-no-such-pkg", "--provider", "dnf", "--json")
    assert json.loads(r.stdout)["version"] == "absent"
    # a steady run of two packages asks rpm once (rpm -qa), not once per package
    log = os.path.join(env.work, "rpm-calls.log")
    wrapper = os.path.join(env.bin, "rpm")
    original = open(wrapper).read()
    with open(wrapper, "w") as fh:
        fh.write(original.replace("HOME=/root exec", f'echo "$*" >>{log}; HOME=/root exec'))
    try:
        r = env.apply("- package:\n    name: ccmtest\n    ensure: present\n    provider: dnf\n"
                      "- package:\n    name: ccmepoch\n    ensure: '2.5'\n    provider: dnf\n"
                      "- package:\n    name: ccm-no-such-pkg\n    ensure: absent\n    provider: dnf\n")
        assert "Stable Resources: 3" in r.stdout
        assert open(log).read() == " ".join(QUERY_ALL[1:]) + "\n"
    finally:
        with open(wrapper, "w") as fh:
            fh.write(original)


def test_ensure_command_and_absent(env):
    r = env.ccm("ensure", "package", "ccmepoch", "absent", "--provider", "dnf")
    assert env.installed("ccmepoch") is None
    assert "package#ccmepoch changed ensure=absent" in r.stdout + r.stderr
    env.ccm("ensure", "package", "ccmtest", "absent", "--provider", "dnf")
    assert env.installed("ccmtest") is None
    r = env.ccm("ensure", "package", "ccmtest", "absent", "--provider", "dnf")
    assert "package#ccmtest stable ensure=absent" in r.stdout + r.stderr
    r = env.ccm("ensure", "package", "ccmtest", "present", "--provider", "dnf")
    assert env.installed("ccmtest") == "1.1-1"
    assert "package#ccmtest changed ensure=present" in r.stdout + r.stderr
    r = env.apply("- package:\n    name: ccmtest\n    ensure: absent\n    provider: dnf\n")
    assert env.installed("ccmtest") is None and "Changed Resources: 1" in r.stdout


def test_host_rpmdb_untouched(env):
    # Debian's rpm would create /root/.rpmdb on first use; everything here went to the installroot
    assert os.path.exists(os.path.join(env.root, "root", ".rpmdb"))
    assert not os.path.exists("/root/.rpmdb") or HOST_RPMDB_EXISTED
