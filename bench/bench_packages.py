"""Package and service status: one query per run (prefetch) against one query per resource.

Figures, not pass/fail (issue 16 target: a steady run of 100 installed Debian packages
under 100 ms for the whole process). Everything runs in one invocation, on
``/usr/bin/python3`` when present, importing ccm from the shipped ``dist/ccm.pyz``
(extracted once under ``build/bench/shiv``):

* apt: the same steady manifest of N installed packages (a) applied by ``execute`` (one
  ``dpkg-query -W`` for the run) and (b) resource by resource with no run cache (one
  ``dpkg-query`` per package, as before prefetching), in-process, median of R rounds;
  plus the whole process ``python3 dist/ccm.pyz apply`` of that manifest.
* systemd (root, with systemd-nspawn and the cached root of ``make test-systemd``): the
  same in a booted container for M units: one ``systemctl show`` for the run against one
  per unit.

Usage: .venv/bin/python bench/bench_packages.py [--packages 100] [--units 30] [--rounds 5]
"""
from __future__ import annotations

import argparse
import getpass
import glob
import grp
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Dict, List, Tuple

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PYZ = os.path.join(REPO, "dist", "ccm.pyz")
WORK = os.path.join(REPO, "build", "bench")
PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable

# The in-process part, run by the chosen interpreter with the pyz's site-packages on sys.path.
INNER = r'''
import json, statistics, subprocess, sys, time
from ccm.apply.manifest import load_manifest
from ccm.manager import Manager
from ccm.resources import base
from ccm.log import UserLogger
import io

path, rounds, kind = sys.argv[1], int(sys.argv[2]), sys.argv[3]
setup = sys.argv[4:]   # a first run: this command before every round puts the old state back

class Counting:
    def __init__(self):
        from ccm.runner import SubprocessRunner
        self.inner, self.calls = SubprocessRunner(), 0
    def run(self, argv, **kw):
        self.calls += 1
        return self.inner.run(argv, **kw)

def manager(runner):
    return Manager(facts={"host": {"info": {"os": "linux", "platformFamily": "debian"}}}, environ={},
                   runner=runner, user_log=UserLogger(stream=io.StringIO()))

def prepared():
    if setup:
        subprocess.run(setup, check=True)
    r = Counting(); m = manager(r); mf = load_manifest(path, m)
    return r, m, mf

def batched():
    r, m, mf = prepared()
    t = time.perf_counter(); res = m.execute(mf); dt = time.perf_counter() - t
    assert not res.failed and res.changed == bool(setup), [e.errors for e in res.events if e.failed]
    return dt, r.calls

def per_resource():
    r, m, mf = prepared()
    m.session.start_session(mf.source)
    t = time.perf_counter()
    for entry in mf.resources:           # the flow without a run cache: one query per resource
        ev = base.run(m, entry.spec, entry.props.copy())
        assert not ev.failed and ev.changed == bool(setup), ev.errors
        m.session.record(ev)
    return time.perf_counter() - t, r.calls

out = {}
for name, fn in (("batched", batched), ("per_resource", per_resource)):
    fn()   # warm
    runs = [fn() for _ in range(rounds)]
    out[name] = {"median_s": statistics.median(d for d, _ in runs), "calls": runs[0][1]}
print(json.dumps(out))
'''


def host_site_packages() -> str:
    root = os.path.join(WORK, "shiv")
    subprocess.run(["env", f"SHIV_ROOT={root}", PYTHON, PYZ, "--version"], check=True, capture_output=True)
    found = sorted(glob.glob(os.path.join(root, "ccm_*", "site-packages")), key=os.path.getmtime)
    return found[-1]


def installed_packages(n: int) -> List[str]:
    out = subprocess.run(["dpkg-query", "-W", "-f=${Package} ${db:Status-Status}\\n"], capture_output=True,
                         text=True, check=True).stdout
    names = [ln.split()[0] for ln in out.splitlines() if ln.endswith(" installed")]
    single = [x for x in sorted(set(names)) if names.count(x) == 1]
    return single[:n]


def manifest(type_name: str, names: List[str], ensure: str, provider: str) -> str:
    """``provider`` "": none set, the host's choice (with apt and dnf both on PATH, the
    platform family breaks the tie)."""
    forced = f"        provider: {provider}\n" if provider else ""
    return "ccm:\n  resources:\n" + "".join(
        f"    - {type_name}:\n        name: {n}\n        ensure: {ensure}\n{forced}" for n in names)


def inner(python: str, sp: str, path: str, rounds: int, kind: str, prefix: List[str] = (),
          setup: List[str] = ()) -> Dict[str, Dict]:
    code = f"import sys; sys.path.insert(0, {sp!r})\n" + INNER
    res = subprocess.run(list(prefix) + [python, "-c", code, path, str(rounds), kind] + list(setup), capture_output=True,
                         text=True, timeout=900)
    if res.returncode != 0:
        raise SystemExit(f"inner benchmark failed: {res.stderr[-2000:]}")
    return json.loads(res.stdout)


def report(title: str, n: int, r: Dict[str, Dict], what: str = "status+plan of a steady run") -> None:
    b, p = r["batched"], r["per_resource"]
    print(f"{title}, {n} resources, in-process {what} (median):")
    print(f"  batched      {b['median_s'] * 1000:8.1f} ms  {b['calls']:4d} commands")
    print(f"  per-resource {p['median_s'] * 1000:8.1f} ms  {p['calls']:4d} commands")
    print(f"  ratio per-resource / batched: {p['median_s'] / b['median_s']:.1f}x")


def bench_apt(n: int, rounds: int) -> None:
    if not shutil.which("dpkg-query"):
        print("apt: skipped (no dpkg-query on this host)")
        return
    names = installed_packages(n)
    os.makedirs(WORK, exist_ok=True)
    path = os.path.join(WORK, "packages.yaml")
    with open(path, "w") as fh:
        fh.write(manifest("package", names, "present", "apt"))
    chosen = os.path.join(WORK, "packages-chosen.yaml")
    with open(chosen, "w") as fh:
        fh.write(manifest("package", names, "present", ""))
    sp = host_site_packages()
    report(f"apt ({PYTHON})", len(names), inner(PYTHON, sp, path, rounds, "apt"))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CCM_", "PYTHON"))}
    env["SHIV_ROOT"] = os.path.join(WORK, "shiv")
    # private lock and cache directories: another ccm run on the host never makes these fail
    env["CCM_LOCK_DIR"], env["CCM_CACHE_DIR"] = os.path.join(WORK, "locks"), os.path.join(WORK, "cache")
    one = os.path.join(WORK, "one-file.yaml")   # the fixed cost of an apply, for comparison
    target = os.path.join(WORK, "one-file.txt")
    with open(one, "w") as fh:
        fh.write(f"ccm:\n  resources:\n    - file:\n        name: {target}\n        ensure: present\n"
                 f"        content: hello\n        owner: {getpass.getuser()}\n"
                 f"        group: {grp.getgrgid(os.getgid()).gr_name}\n        mode: '0644'\n")
    argvs = {f"apply ({len(names)} packages)": [PYTHON, PYZ, "apply", path],
             f"apply ({len(names)}, no provider:)": [PYTHON, PYZ, "apply", chosen],
             "apply (one file)": [PYTHON, PYZ, "apply", one], "--version": [PYTHON, PYZ, "--version"]}
    runs: Dict[str, List[Tuple[float, float]]] = {label: [] for label in argvs}
    for i in range(2 * rounds + 1):   # alternated, the first round unmeasured (extraction, caches)
        for label, argv in argvs.items():
            wall, cpu = timed(argv, env)
            if i:
                runs[label].append((wall, cpu))
    for label in runs:
        wall = statistics.median(w for w, _ in runs[label]) * 1000
        cpu = statistics.median(c for _, c in runs[label]) * 1000
        print(f"  whole process `ccm.pyz {label}`{' ' * (22 - len(label))}{wall:6.1f} ms wall, {cpu:6.1f} ms CPU "
              f"(median of {len(runs[label])})")
    print("  (target: the packages run under 100 ms; the one-file apply is the fixed cost of any apply)")


def timed(argv: List[str], env: Dict[str, str]) -> Tuple[float, float]:
    """Wall and CPU seconds (user + system) of one run of ``argv``, output discarded."""
    started = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, cwd=WORK, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} exited {proc.returncode}")
    return wall, usage.ru_utime + usage.ru_stime


def bench_systemd(units: int, rounds: int) -> None:
    if os.geteuid() != 0 or not shutil.which("systemd-nspawn"):
        print("systemd: skipped (needs root and systemd-nspawn; see make test-systemd)")
        return
    sys.path.insert(0, REPO)
    from tests.hosts import roots
    from tests.resources.service.nspawn import Container

    if not roots.is_ready("bookworm", "systemd"):
        print("systemd: skipped (no cached container root: run make test-systemd once)")
        return
    tmp = tempfile.mkdtemp(prefix="ccm-bench-")
    ct = Container(roots.root_path("bookworm", "systemd"), f"ccmbench{os.getpid()}", tmp,
                   binds=[f"{os.path.dirname(PYZ)}:/ccm"])
    ct.boot()
    try:
        names = [f"ccm-b{i}" for i in range(units)]
        for n in names:
            ct.write(f"/etc/systemd/system/{n}.service",
                     "[Unit]\nDescription=bench\n\n[Service]\nExecStart=/bin/sleep infinity\n\n"
                     "[Install]\nWantedBy=multi-user.target\n")
        ct.run(["systemctl", "daemon-reload"])
        for ensure in ("stopped", "running"):
            ct.write(f"/tmp/{ensure}.yaml", manifest("service", names, ensure, "systemd"))
        ct.run(["env", "SHIV_ROOT=/tmp/shiv", "python3", "/ccm/ccm.pyz", "--version"])
        found = glob.glob(ct.path("/tmp/shiv") + "/ccm_*/site-packages")
        sp = found[0][len(ct.path("")):]
        title = "systemd 252 in systemd-nspawn (container python3)"
        # stopped units are not loaded: systemd loads each to answer show (the costly case)
        report(f"{title}, steady, units stopped", units,
               inner("python3", sp, "/tmp/stopped.yaml", rounds, "systemd", prefix=ct.prefix()))
        ct.run(["systemctl", "start"] + names)
        report(f"{title}, steady, units running", units,
               inner("python3", sp, "/tmp/running.yaml", rounds, "systemd", prefix=ct.prefix()))
        report(f"{title}, first run, every unit stopped -> running", units,
               inner("python3", sp, "/tmp/running.yaml", rounds, "systemd", prefix=ct.prefix(),
                     setup=["systemctl", "stop"] + names), "status, plan and action")
    finally:
        ct.stop()
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--packages", type=int, default=100)
    ap.add_argument("--units", type=int, default=30)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    if not os.path.exists(PYZ):
        raise SystemExit("dist/ccm.pyz missing: make pyz")
    bench_apt(args.packages, args.rounds)
    if args.units > 0:   # --units 0: apt only
        bench_systemd(args.units, args.rounds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
