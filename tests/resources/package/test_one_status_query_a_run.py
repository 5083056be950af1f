"""Package managers asked once per run (Puppet's prefetch), against the real dpkg-query.

Read-only: a steady manifest of packages installed on this host runs one ``dpkg-query -W``
for all of them; a resource that changed something (a file here) drops the cached
answers, so the next package asks again; a new run (an agent's next cycle) never sees the
previous run's answers; a manifest of one package keeps the per-package query.
"""
from __future__ import annotations

import grp
import os
import pwd
import shutil
import subprocess

import pytest

from ccm.apply.manifest import load_manifest
from ccm.apply.runcache import RunCache
from ccm.registry import Registry
from ccm.resources import BUILTIN_TYPES
from ccm.resources.package.apt import QUERY_ALL, STATUS_FORMAT
from ccm.runner import SubprocessRunner

from tests import kit

pytestmark = pytest.mark.skipif(shutil.which("dpkg-query") is None or shutil.which("apt-get") is None,
                                reason="needs dpkg (a Debian host)")


def installed(count):
    out = subprocess.run(["dpkg-query", "-W", "-f=${Package} ${db:Status-Status}\\n"], capture_output=True,
                         text=True, check=True).stdout
    names = sorted({ln.split()[0] for ln in out.splitlines() if ln.endswith(" installed")})
    multi = subprocess.run(["dpkg-query", "-W", "-f=${Package}\\n"], capture_output=True, text=True).stdout.split()
    names = [n for n in names if multi.count(n) == 1]
    assert len(names) >= count
    return names[:count]


class RecordingRunner(SubprocessRunner):
    def __init__(self):
        super().__init__()
        self.calls = []

    def run(self, argv, **kw):
        self.calls.append(list(argv))
        return super().run(argv, **kw)


def run_manifest(tmp_path, body, runner):
    path = tmp_path / "manifest.yaml"
    path.write_text("ccm:\n  resources:\n" + body)
    m = kit.manager(log_level=None, registry=Registry(BUILTIN_TYPES), runner=runner)
    return m.execute(load_manifest(str(path), m)), m


def packages(names):
    return "".join(f"    - package:\n        name: {n}\n        ensure: present\n        provider: apt\n" for n in names)


def dpkg_calls(runner):
    return [c for c in runner.calls if c[0] == "dpkg-query"]


def test_steady_run_asks_dpkg_once(tmp_path):
    names = installed(20)
    runner = RecordingRunner()
    result, m = run_manifest(tmp_path, packages(names), runner)
    assert not result.failed and not result.changed
    assert all(e.status.stable for e in result.events)
    assert dpkg_calls(runner) == [list(QUERY_ALL)]
    assert not hasattr(m, "run_cache"), "the cache lives in the run, never on the manager"
    # the versions equal what the per-package query reports
    for e in result.events[:3]:
        one = subprocess.run(["dpkg-query", "-W", STATUS_FORMAT, e.name], capture_output=True, text=True).stdout
        assert e.status.metadata["version"] == one.split(" ")[1]


def test_a_change_drops_the_cached_answers(tmp_path):
    names = installed(4)
    body = packages(names[:2]) + f"    - file:\n        name: {tmp_path}/f\n        ensure: present\n" \
        f"        content: x\n        owner: {pwd.getpwuid(os.getuid()).pw_name}\n" \
        f"        group: {grp.getgrgid(os.getgid()).gr_name}\n        mode: '0644'\n" + packages(names[2:])
    runner = RecordingRunner()
    result, _m = run_manifest(tmp_path, body, runner)
    assert [e.changed for e in result.events] == [False, False, True, False, False]
    assert dpkg_calls(runner) == [list(QUERY_ALL), list(QUERY_ALL)]
    runner = RecordingRunner()
    result, _m = run_manifest(tmp_path, body, runner)   # steady now: one query
    assert not result.changed and dpkg_calls(runner) == [list(QUERY_ALL)]


def test_one_package_keeps_the_per_package_query(tmp_path):
    name = installed(1)[0]
    runner = RecordingRunner()
    result, _m = run_manifest(tmp_path, packages([name]), runner)
    assert not result.failed
    assert dpkg_calls(runner) == [["dpkg-query", "-W", STATUS_FORMAT, name]]


def test_unknown_packages_are_asked_one_by_one(tmp_path):
    names = installed(2) + ["ccm-no-such-package-xyz"]
    body = packages(names[:2]) + "    - package:\n        name: ccm-no-such-package-xyz\n        ensure: absent\n" \
                                 "        provider: apt\n"
    runner = RecordingRunner()
    result, _m = run_manifest(tmp_path, body, runner)
    assert not result.failed and not result.changed
    assert dpkg_calls(runner) == [list(QUERY_ALL), ["dpkg-query", "-W", STATUS_FORMAT, "ccm-no-such-package-xyz"]]
    assert result.events[2].status.metadata["extended"] == {"status": "unknown"}


def test_run_cache_loads_once_across_threads():
    import threading

    cache = RunCache([("package", "a")])
    calls = []

    def loader():
        calls.append(1)
        return {"a": ["x"]}

    threads = [threading.Thread(target=cache.load, args=("k", loader)) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert calls == [1] and cache.expected("package") == ("a",) and cache.expected("service") == ()
    cache.invalidate()
    cache.load("k", loader)
    assert calls == [1, 1]


def test_a_failed_resource_drops_the_cached_answers_too(tmp_path):
    names = installed(2)
    body = packages(names[:1]) + "    - exec:\n        name: /bin/false\n" + packages(names[1:])
    runner = RecordingRunner()
    result, _m = run_manifest(tmp_path, body, runner)
    assert [e.failed for e in result.events] == [False, True, False]
    assert dpkg_calls(runner) == [list(QUERY_ALL), list(QUERY_ALL)]
