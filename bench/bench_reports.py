"""Fleet reports against real nats-server processes (figures, not pass/fail; issue 28).

1. What publishing adds to a steady ``ccm apply`` on loopback: the same apply with and
   without ``--publish-report jetstream``, in alternating pairs in the same run; medians of
   wall and CPU time, the median of the pairwise differences, and their ratio (target:
   under 20 ms added). ``--callgrind`` also counts instructions of one run of each.
2. A 3-node JetStream cluster (R3 stream): 10,000 hosts x 3 manifests published by the load
   generator (``tests/fleet/loadgen.py``: the real ``ReportPublisher``), 50 hosts failing;
   then ``ccm report fleet --json`` and ``--failed`` against a bare nats-py read of the same
   stream (fresh processes, same interpreter; targets: under 2 s and within 3x, ``--failed``
   under 1 s, reader peak RSS under 100 MiB).

    python bench/bench_reports.py [--pairs 15] [--hosts 10000] [--manifests 3] [--failing 50]
                                  [--skip-publish] [--skip-fleet] [--callgrind]
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Dict, List, Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "tests", "nats"))
sys.path.insert(0, os.path.join(ROOT, "tests", "fleet"))

from natsfixture import Cluster, Server, write_context  # noqa: E402

BARE = r'''
import asyncio, sys, nats, nats.js.api as api
async def main():
    nc = await nats.connect(sys.argv[1].split(","))
    js = nc.jetstream()
    done = asyncio.get_running_loop().create_future()
    bodies = []
    async def cb(msg):
        bodies.append(msg.data)
        if msg.metadata.num_pending == 0 and not done.done():
            done.set_result(None)
    sub = await js.subscribe("choria.ccm.reports.*.*", stream="CCM_REPORTS", ordered_consumer=True,
                             deliver_policy=api.DeliverPolicy.LAST_PER_SUBJECT, cb=cb)
    await asyncio.wait_for(done, 120)
    await sub.unsubscribe()
    await nc.close()
    print(len(bodies))
asyncio.run(main())
'''


def ccm_argv() -> List[str]:
    """The shipped file on the system interpreter when built (as cron runs it), else the tree."""
    pyz = os.path.join(ROOT, "dist", "ccm.pyz")
    if os.path.exists(pyz) and os.path.exists("/usr/bin/python3"):
        return ["/usr/bin/python3", pyz]
    return [sys.executable, "-m", "ccm"]


def measured(argv: List[str], env: Dict[str, str], cwd: str) -> Tuple[float, float, int, str]:
    """(wall s, user+sys s, peak RSS KiB, stdout) of one process (wait4: the child's own usage)."""
    started = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL)
    out = proc.stdout.read() if proc.stdout else b""
    err = proc.stderr.read() if proc.stderr else b""
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    proc.returncode = os.waitstatus_to_exitcode(status) if hasattr(os, "waitstatus_to_exitcode") else status >> 8
    if proc.returncode != 0:
        raise SystemExit(f"{argv[:5]} failed ({proc.returncode}): {err.decode()[-2000:]}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss, out.decode()


def env_for(work: str, urls: str) -> Dict[str, str]:
    cfg = os.path.join(work, "config")
    write_context(cfg, "CCM", {"url": urls})
    # hosts do not set PYTHONDONTWRITEBYTECODE: with it every import would compile its source
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NATS_", "CCM_", "PYTHONDONTWRITEBYTECODE"))}
    env.update(XDG_CONFIG_HOME=cfg, CCM_STATE_DIR=os.path.join(work, "state"), CCM_LOCK_DIR=os.path.join(work, "locks"),
               CCM_CACHE_DIR=os.path.join(work, "cache"), HOME=work)
    return env


STEADY = """ccm:
  resources:
    - file:
{files}"""


def publish_cost(pairs: int, callgrind: bool) -> None:
    work = tempfile.mkdtemp(prefix="bench-reports-")
    server = Server(os.path.join(work, "nats")).start()
    try:
        env = env_for(work, server.url)
        out = os.path.join(work, "out")
        os.makedirs(out)
        files = "".join(f"        - {out}/f{i}.conf:\n            ensure: present\n            content: \"{i}\\n\"\n"
                        f"            owner: \"{os.getuid()}\"\n            group: \"{os.getgid()}\"\n"
                        f"            mode: \"0644\"\n" for i in range(10))
        manifest = os.path.join(work, "manifest.yaml")
        with open(manifest, "w") as fh:
            fh.write(STEADY.format(files=files))
        base = ccm_argv()
        measured(base + ["report", "init"], env, work)
        off = base + ["apply", "--quiet", "--no-report", manifest]
        on = off + ["--publish-report", "jetstream"]
        for _ in range(3):   # first run, plan cache, page cache
            measured(off, env, work)
            measured(on, env, work)
        walls: Dict[str, List[float]] = {"off": [], "on": []}
        cpus: Dict[str, List[float]] = {"off": [], "on": []}
        for _ in range(pairs):
            for name, argv in (("off", off), ("on", on)):
                wall, cpu, _rss, _ = measured(argv, env, work)
                walls[name].append(wall)
                cpus[name].append(cpu)
        delta = statistics.median(b - a for a, b in zip(walls["off"], walls["on"])) * 1000
        cdelta = statistics.median(b - a for a, b in zip(cpus["off"], cpus["on"])) * 1000
        print(f"steady apply of 10 files, {' '.join(base[:2])}, {pairs} alternating pairs")
        print(f"  wall median: off {statistics.median(walls['off']) * 1000:.1f} ms, "
              f"on {statistics.median(walls['on']) * 1000:.1f} ms, "
              f"ratio {statistics.median(walls['on']) / statistics.median(walls['off']):.3f}")
        print(f"  added by publishing (median of pair differences): wall {delta:.1f} ms, cpu {cdelta:.1f} ms "
              "(target: under 20 ms)")
        if callgrind:
            counts = {}
            for name, argv in (("off", off), ("on", on)):
                outf = os.path.join(work, f"callgrind.{name}")
                subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={outf}"] + argv, env=env,
                               cwd=work, capture_output=True, check=True)
                with open(outf) as fh:
                    counts[name] = next(int(line.split()[1]) for line in fh if line.startswith("summary:"))
            print(f"  instructions: off {counts['off']:,}, on {counts['on']:,}, ratio {counts['on'] / counts['off']:.3f}, "
                  f"added {counts['on'] - counts['off']:,}")
    finally:
        server.stop()


def fleet_read(hosts: int, manifests: int, failing: int) -> None:
    from loadgen import Fleet

    work = tempfile.mkdtemp(prefix="bench-fleet-")
    cluster = Cluster(os.path.join(work, "cluster")).start()
    try:
        env = env_for(work, cluster.urls)
        base = ccm_argv()
        measured(base + ["report", "init", "--replicas", "3"], env, work)
        fleet = Fleet(hosts, manifests, failing, state_root=os.path.join(work, "hosts"), environ=env)
        took = fleet.run(range(hosts), workers=4, shared=True)
        undelivered = sum(1 for ds in fleet.deliveries.values() for d in ds if not d.delivered)
        print(f"R3 cluster: {hosts * manifests:,} reports from {hosts:,} hosts published in {took:.1f} s "
              f"({hosts * manifests / took:,.0f}/s), {undelivered} not delivered at once")
        import json

        rss, times, outs = 0, {}, {}
        for name, argv in (("bare", [sys.executable, "-c", BARE, cluster.urls]),
                           ("json", base + ["report", "fleet", "--json"]),
                           ("failed", base + ["report", "fleet", "--failed"])):
            runs = [measured(argv, env, work) for _ in range(3)]
            times[name] = (statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs))
            outs[name] = runs[-1][3]
            if name != "bare":
                rss = max([rss] + [r[2] for r in runs])
        (bw, bc), (jw, jc), (fw, fc) = times["bare"], times["json"], times["failed"]
        print(f"  bare nats-py read of {outs['bare'].strip()} subjects: wall {bw:.2f} s, cpu {bc:.2f} s")
        print(f"  ccm report fleet --json: wall {jw:.2f} s ({jw / bw:.2f}x the bare read), cpu {jc:.2f} s "
              f"({jc / bc:.2f}x) (targets: < 2 s, < 3x); summary {json.loads(outs['json'])['summary']}")
        print(f"  ccm report fleet --failed: wall {fw:.2f} s, cpu {fc:.2f} s, {len(outs['failed'].splitlines()) - 2} "
              "hosts listed (target: < 1 s)")
        print(f"  reader peak RSS: {rss / 1024:.0f} MiB (target: < 100 MiB)")
    finally:
        cluster.stop()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--pairs", type=int, default=15)
    p.add_argument("--hosts", type=int, default=10000)
    p.add_argument("--manifests", type=int, default=3)
    p.add_argument("--failing", type=int, default=50)
    p.add_argument("--skip-publish", action="store_true")
    p.add_argument("--skip-fleet", action="store_true")
    p.add_argument("--callgrind", action="store_true")
    args = p.parse_args()
    if not args.skip_publish:
        publish_cost(args.pairs, args.callgrind)
    if not args.skip_fleet:
        fleet_read(args.hosts, args.manifests, args.failing)


if __name__ == "__main__":
    main()
