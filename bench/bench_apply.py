"""Whole-process cost of `ccm apply` on N file resources, against a plain-Python floor.

The floor is a script with no framework that does the same work: for each file, stat it,
read and hash its content, compare owner/group/mode (and on the first run, write it).
Both run as fresh processes in the same run; figures are ratios, not pass/fail.

    python bench/bench_apply.py [N ...]        (default: 100 1000 10000)

ccm runs as users run it: dist/ccm.pyz when it has been built (``make bench`` builds it),
else ``python -m ccm`` from the source tree with bytecode caching on.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

FLOOR = r'''
import hashlib, json, os, sys
spec = json.load(open(sys.argv[1]))
changed = 0
for path, content, uid, gid, mode in spec:
    data = content.encode()
    try:
        st = os.stat(path)
        with open(path, "rb") as fh:
            same = hashlib.sha256(fh.read()).hexdigest() == hashlib.sha256(data).hexdigest()
        ok = same and st.st_uid == uid and st.st_gid == gid and (st.st_mode & 0o777) == mode
    except FileNotFoundError:
        ok = False
    if not ok:
        tmp = path + ".tmp"
        with open(tmp, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chown(tmp, uid, gid)
        os.chmod(tmp, mode)
        os.rename(tmp, path)
        changed += 1
print(changed)
'''


def run(argv, env=None):
    started = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    _pid, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - started
    err = proc.stderr.read().decode()
    proc.stderr.close()
    code = os.waitstatus_to_exitcode(status) if hasattr(os, "waitstatus_to_exitcode") else status >> 8
    if code != 0:
        raise SystemExit(f"{argv[:3]} failed ({code}): {err[-2000:]}")
    return elapsed, usage.ru_maxrss / 1024.0


def scenario(n, workdir):
    target = os.path.join(workdir, "files")
    os.makedirs(target)
    uid, gid = os.getuid(), os.getgid()
    lines = ["ccm:", "  resources:", "    - file:", "        - defaults:", "            ensure: present",
             f"            owner: \"{uid}\"", f"            group: \"{gid}\"", "            mode: \"0644\""]
    spec = []
    for i in range(n):
        path = os.path.join(target, f"f{i:05d}.conf")
        content = f"setting_{i} = {i * 7}\n"
        lines += [f"        - {path}:", f"            content: {json.dumps(content)}"]
        spec.append((path, content, uid, gid, 0o644))
    manifest = os.path.join(workdir, "manifest.yaml")
    with open(manifest, "w") as fh:
        fh.write("\n".join(lines) + "\n")
    floor_spec = os.path.join(workdir, "floor.json")
    with open(floor_spec, "w") as fh:
        json.dump(spec, fh)
    floor = os.path.join(workdir, "floor.py")
    with open(floor, "w") as fh:
        fh.write(FLOOR)
    return target, manifest, floor, floor_spec


def main():
    sizes = [int(a) for a in sys.argv[1:]] or [100, 1000, 10000]
    env = dict(os.environ, PYTHONPATH=ROOT, NO_COLOR="1")
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    pyz = os.path.join(ROOT, "dist", "ccm.pyz")
    if os.path.exists(pyz):
        ccm = [sys.executable, pyz, "apply", "--no-report"]
        subprocess.run(ccm[:2] + ["--version"], check=True, stdout=subprocess.DEVNULL, env=env)  # warm
        print(f"ccm: {pyz}")
    else:
        ccm = [sys.executable, "-m", "ccm", "apply", "--no-report"]
        print("ccm: python -m ccm (source tree; run `make pyz` to measure the shipped file)")
    results = {}
    print(f"{'N':>6} {'phase':>7} {'ccm s':>8} {'floor s':>8} {'ratio':>6} {'ccm RSS MB':>11}")
    for n in sizes:
        workdir = tempfile.mkdtemp(prefix=f"ccm-bench-{n}-")
        try:
            target, manifest, floor, floor_spec = scenario(n, workdir)
            ccm_first, rss_first = run(ccm + [manifest], env)
            ccm_again, rss_again = run(ccm + [manifest], env)
            shutil.rmtree(target)
            os.makedirs(target)
            floor_first, _ = run([sys.executable, floor, floor_spec])
            floor_again, _ = run([sys.executable, floor, floor_spec])
            results[n] = (ccm_first, ccm_again, rss_first, rss_again)
            print(f"{n:>6} {'first':>7} {ccm_first:8.2f} {floor_first:8.2f} {ccm_first / floor_first:6.1f} {rss_first:11.1f}")
            print(f"{n:>6} {'stable':>7} {ccm_again:8.2f} {floor_again:8.2f} {ccm_again / floor_again:6.1f} {rss_again:11.1f}")
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
    if 1000 in results and 10000 in results:
        print(f"growth 1000 -> 10000 (stable run): {results[10000][1] / results[1000][1]:.1f}x")
        print(f"growth 1000 -> 10000 (first run):  {results[10000][0] / results[1000][0]:.1f}x")


if __name__ == "__main__":
    main()
