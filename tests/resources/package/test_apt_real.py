"""Real apt on this host (marker ``apt``, root, network to the Debian archive).

Picks a tiny package that is not installed and whose installation pulls in nothing else
(preferring one for which ``apt-cache policy`` offers two versions, so a real downgrade
and a real ``latest`` upgrade happen), then: noop changes nothing, pin a version, stable
on the second run, ``latest`` upgrades then is stable without running apt-get, downgrade,
remove; a nonexistent package in a manifest fails with apt's own error line while the
other resources are unaffected. The package is purged at the end, as it was absent.
ccm never runs ``apt-get update``; this test runs it once itself if the lists are empty.
"""
from __future__ import annotations

import glob
import os
import shutil
import subprocess
import textwrap

import pytest

from ccm.registry import Registry
from ccm.resources import BUILTIN_TYPES
from ccm.resources import properties as P
from ccm.resources.package.apt import parse_candidate, parse_version_table
from ccm.runner import SubprocessRunner

from tests import kit

pytestmark = [
    pytest.mark.apt,
    pytest.mark.skipif(os.geteuid() != 0, reason="needs root"),
    pytest.mark.skipif(shutil.which("apt-get") is None or shutil.which("dpkg-query") is None, reason="needs apt"),
]

# rtpengine-iptables: 5 kB, depends only on libc6, and Debian 12 carries it in both
# bookworm and bookworm-security; the others are the classic tiny packages.
PREFERRED = ("rtpengine-iptables", "hello", "sl", "figlet", "cowsay")
ENV = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C", "LC_ALL": "C", "DEBIAN_FRONTEND": "noninteractive"}
MISSING = "ccm-no-such-package-xyz"


def sh(*argv, check=False):
    return subprocess.run(list(argv), capture_output=True, text=True, env=ENV, check=check, timeout=600)


def dpkg_status(pkg):
    res = sh("dpkg-query", "-W", "-f=${Version} ${db:Status-Status}", pkg)
    return res.stdout.strip() if res.returncode == 0 else ""


class RecordingRunner(SubprocessRunner):
    def __init__(self):
        super().__init__()
        self.calls = []

    def run(self, argv, **kw):
        self.calls.append((list(argv), dict(kw.get("env") or {})))
        return super().run(argv, **kw)


@pytest.fixture(scope="module")
def package():
    if not glob.glob("/var/lib/apt/lists/*_Packages*"):
        sh("apt-get", "update", "-q")       # once, by the test: ccm itself never does
    chosen = None
    for pkg in PREFERRED:
        if dpkg_status(pkg):
            continue                        # known to dpkg in any state: leave it alone
        policy = sh("apt-cache", "policy", pkg).stdout
        if "Candidate:" not in policy or parse_candidate(pkg, policy) == "(none)":
            continue
        simulated = sh("apt-get", "-s", "install", pkg).stdout
        if sum(1 for ln in simulated.splitlines() if ln.startswith("Inst ")) != 1:
            continue                        # would pull in other packages
        versions = parse_version_table(policy)
        info = {"name": pkg, "candidate": parse_candidate(pkg, policy), "versions": versions}
        if chosen is None or (len(versions) > 1 and len(chosen["versions"]) < 2):
            chosen = info
        if len(versions) > 1:
            break
    if chosen is None:
        pytest.skip("no tiny, uninstalled, self-contained package available from the apt lists")
    older = [v for v in chosen["versions"] if v != chosen["candidate"]]
    chosen["pin"] = older[0] if older else chosen["candidate"]
    yield chosen
    if dpkg_status(chosen["name"]):
        sh("apt-get", "-q", "-y", "purge", chosen["name"])
    assert dpkg_status(chosen["name"]) == "", "the machine state was not restored"


def manager(noop=False, runner=None):
    return kit.manager(log_level=None, registry=Registry(BUILTIN_TYPES), noop=noop, runner=runner or RecordingRunner())


def ensure(m, name, value):
    spec = m.registry.spec("package")
    p = P.build(spec, {"name": name, "ensure": value})
    P.validate(spec, p)
    ev = m.apply_resource(p)
    m.record(ev)
    return ev


def apt_get_calls(m):
    return [argv for argv, _env in m.runner.calls if argv[0] == "apt-get"]


def test_package_lifecycle(package):
    pkg, pin, candidate = package["name"], package["pin"], package["candidate"]

    m = manager(noop=True)
    ev = ensure(m, pkg, "present")
    assert ev.changed and ev.noop and ev.noop_message == "Would have installed version present", ev.errors
    assert apt_get_calls(m) == [] and dpkg_status(pkg) == ""

    m = manager()
    ev = ensure(m, pkg, pin)
    assert not ev.failed and ev.changed and ev.provider == "apt", ev.errors
    assert ev.final_ensure == pin and dpkg_status(pkg) == f"{pin} installed"
    assert ev.status.metadata["version"] == pin and ev.status.metadata["extended"] == {"status": "installed"}
    install = apt_get_calls(m)[0]
    assert install == ["apt-get", "install", "-y", "-q", "-o", "DPkg::Options::=--force-confold",
                       "--allow-downgrades", f"{pkg}={pin}"]
    envs = [env for argv, env in m.runner.calls]
    assert all(env == {"DEBIAN_FRONTEND": "noninteractive", "APT_LISTBUGS_FRONTEND": "none",
                       "APT_LISTCHANGES_FRONTEND": "none"} for env in envs)

    m = manager()
    for value in (pin, "present"):
        ev = ensure(m, pkg, value)
        assert not ev.failed and not ev.changed and ev.status.stable, (value, ev.errors)
    assert apt_get_calls(m) == []

    m = manager()
    ev = ensure(m, pkg, "latest")
    assert not ev.failed and ev.final_ensure == candidate, ev.errors
    assert ev.changed == (pin != candidate)
    assert dpkg_status(pkg) == f"{candidate} installed"

    m = manager()
    ev = ensure(m, pkg, "latest")                     # already latest: stable, apt-get not run
    assert not ev.failed and not ev.changed and ev.status.stable
    assert apt_get_calls(m) == []
    assert [argv[:2] for argv, _ in m.runner.calls] == [["dpkg-query", "-W"], ["apt-cache", "policy"]]

    if pin != candidate:                              # a real downgrade
        m = manager()
        ev = ensure(m, pkg, pin)
        assert not ev.failed and ev.changed and ev.final_ensure == pin, ev.errors
        assert dpkg_status(pkg) == f"{pin} installed"

    m = manager(noop=True)
    ev = ensure(m, pkg, "absent")
    assert ev.changed and ev.noop and ev.noop_message == "Would have uninstalled"
    assert dpkg_status(pkg).endswith(" installed")

    m = manager()
    ev = ensure(m, pkg, "absent")
    assert not ev.failed and ev.changed and ev.final_ensure == "absent", ev.errors
    assert apt_get_calls(m) == [["apt-get", "-q", "-y", "remove", pkg]]
    assert not dpkg_status(pkg).endswith(" installed")
    ev = ensure(m, pkg, "absent")
    assert not ev.failed and not ev.changed

    m = manager()
    ev = ensure(m, pkg, "latest")                     # latest from absent installs the candidate
    assert not ev.failed and ev.changed and ev.final_ensure == candidate, ev.errors
    assert apt_get_calls(m)[-1][-1] == f"{pkg}={candidate}"
    assert not ensure(m, pkg, "absent").failed


def test_missing_package_fails_alone_in_a_manifest(tmp_path, package):
    from ccm.apply import load_manifest

    before, after = tmp_path / "before.txt", tmp_path / "after.txt"
    manifest = tmp_path / "manifest.yaml"
    manifest.write_text(textwrap.dedent(f"""
        ccm:
          resources:
            - file:
                name: {before}
                ensure: present
                content: "first\\n"
                owner: root
                group: root
                mode: "0644"
            - package:
                name: {MISSING}
                ensure: present
            - package:
                name: {package['name']}
                ensure: absent
            - file:
                name: {after}
                ensure: present
                content: "last\\n"
                owner: root
                group: root
                mode: "0644"
    """))
    m = manager()
    result = m.execute(load_manifest(str(manifest), m))
    by_name = {e.name: e for e in result.events}
    missing = by_name[MISSING]
    assert missing.failed
    assert len(missing.errors) == 1
    assert missing.errors[0].splitlines()[0] == (f'failed to install package "{MISSING}", apt-get exited 100: '
                                                 f"E: Unable to locate package {MISSING}")
    assert not by_name[str(before)].failed and by_name[str(before)].changed
    assert not by_name[str(after)].failed and by_name[str(after)].changed
    assert not by_name[package["name"]].failed and not by_name[package["name"]].changed
    assert after.read_text() == "last\n"
    assert result.summary.failed_resources == 1
