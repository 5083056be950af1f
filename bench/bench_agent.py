"""The agent over time: memory, idle CPU, and each cycle's apply time against `ccm apply`.

K local manifests of N file resources each (default 3 x 100), applied every INTERVAL
seconds (default 30, the floor) for M minutes by one real `ccm agent` process:

* RSS growth: the agent's RSS at the end (and its maximum) minus its RSS right after
  the first scheduled cycle;
* idle CPU: CPU seconds the agent used between cycles (1 s margins either side of each
  cycle) divided by the wall time of those windows;
* apply time: each scheduled cycle (all K manifests, from the agent's "Starting
  scheduled run" to "Completed scheduled run" log lines) against the same K manifests
  applied by `ccm apply` from the CLI, one process each, in the same run (whole
  processes, and the engine-only "Run Time" the CLI reports).

    python bench/bench_agent.py [--minutes M] [--interval S] [--manifests K] [--resources N]

The issue's full run is `--minutes 10`; the default (2 minutes) keeps `make bench`
short. ccm runs as users run it: dist/ccm.pyz when built, else `python -m ccm`.
Figures, not pass/fail.
"""
from __future__ import annotations

import argparse
import getpass
import grp
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def ccm_argv() -> list:
    pyz = os.path.join(ROOT, "dist", "ccm.pyz")
    if os.path.exists(pyz):
        return [sys.executable, pyz]
    return [sys.executable, "-m", "ccm"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def write_manifests(work: str, k: int, n: int) -> list:
    import yaml

    user, group = getpass.getuser(), grp.getgrgid(os.getgid()).gr_name
    paths = []
    for m in range(k):
        out = os.path.join(work, f"out{m}")
        os.makedirs(out)
        resources = [{"file": {"name": os.path.join(out, f"file{i}.txt"), "ensure": "present",
                               "content": f"manifest {m} file {i}\n", "owner": user, "group": group,
                               "mode": "0644"}} for i in range(n)]
        path = os.path.join(work, f"manifest{m}.yaml")
        with open(path, "w") as fh:
            yaml.safe_dump({"ccm": {"resources": resources}}, fh)
        paths.append(path)
    return paths


TS = re.compile(r'^time=(\S+) level=\S+ msg=(?:"((?:[^"\\]|\\.)*)"|(\S+))')


def parse_log(text: str) -> list:
    events = []
    for line in text.splitlines():
        m = TS.match(line)
        if m:
            ts = datetime.strptime(m.group(1), "%Y-%m-%dT%H:%M:%S.%fZ").timestamp()
            events.append((ts, m.group(2) if m.group(2) is not None else m.group(3)))
    return events


def _go_seconds(text: str) -> float:
    m = re.match(r"([0-9.]+)(ms|s|µs|m)", text)
    if not m:
        return 0.0
    return float(m.group(1)) * {"s": 1, "ms": 1e-3, "µs": 1e-6, "m": 60}[m.group(2)]


def cli_applies(paths: list, reps: int) -> tuple:
    """-> (median whole-process seconds for all K manifests, median engine 'Run Time' sum)."""
    walls, engines = [], []
    for _ in range(reps):
        wall = engine = 0.0
        for p in paths:
            started = time.perf_counter()
            r = subprocess.run(ccm_argv() + ["apply", p], capture_output=True, text=True, cwd=ROOT)
            wall += time.perf_counter() - started
            if r.returncode != 0:
                raise SystemExit(f"ccm apply {p} failed: {r.stderr[-2000:]}")
            m = re.search(r"Run Time: (\S+)", r.stdout)
            if m:
                engine += _go_seconds(m.group(1))
        walls.append(wall)
        engines.append(engine)
    return statistics.median(walls), statistics.median(engines)


def main() -> None:
    import psutil
    import yaml

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--minutes", type=float, default=2.0)
    ap.add_argument("--interval", type=float, default=30.0)
    ap.add_argument("--manifests", type=int, default=3)
    ap.add_argument("--resources", type=int, default=100)
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="ccm-bench-agent-")
    try:
        paths = write_manifests(work, args.manifests, args.resources)
        env = dict(os.environ)
        if args.interval < 30:   # below the floor only through the test-only scale
            env["CCM_AGENT_TEST_TIMESCALE"] = str(args.interval / 30.0)
        cfg = os.path.join(work, "config.yaml")
        with open(cfg, "w") as fh:
            yaml.safe_dump({"interval": f"{args.interval}s", "manifests": paths, "monitor_port": free_port(),
                            "cache_dir": os.path.join(work, "cache")}, fh)
        log_path = os.path.join(work, "agent.log")
        with open(log_path, "w") as log:
            proc = subprocess.Popen(ccm_argv() + ["agent", "--config", cfg], stdout=log, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, env=env, cwd=work)
        ps = psutil.Process(proc.pid)
        samples = []   # (wall, rss, cpu seconds)
        end = time.time() + args.minutes * 60
        try:
            while time.time() < end and proc.poll() is None:
                t = ps.cpu_times()
                samples.append((time.time(), ps.memory_info().rss, t.user + t.system))
                time.sleep(0.5)
        finally:
            proc.terminate()
            rc = proc.wait(30)
        with open(log_path) as fh:
            events = parse_log(fh.read())
        starts = [t for t, msg in events if msg == "Starting scheduled run"]
        ends = [t for t, msg in events if msg == "Completed scheduled run"]
        cycles = [e - s for s, e in zip(starts, ends)]
        # the engine part of each cycle: its "Session: ... duration=" lines (what the CLI calls Run Time)
        sessions = [(t, _go_seconds(msg.rsplit("duration=", 1)[1])) for t, msg in events
                    if msg.startswith("Session:") and "duration=" in msg]
        engine = [sum(d for t, d in sessions if s <= t <= e) for s, e in zip(starts, ends)]
        if not cycles:
            raise SystemExit(f"no scheduled cycle completed (exit {rc}); log in {log_path}")
        first_end = ends[0]
        after = [s for s in samples if s[0] >= first_end + 0.5]
        base_rss = after[0][1] if after else samples[-1][1]
        last_rss, max_rss = samples[-1][1], max(s[1] for s in after or samples)
        busy = [(s - 1.0, e + 1.0) for s, e in zip(starts, ends)]
        idle_cpu = idle_wall = 0.0
        for (t0, _r0, c0), (t1, _r1, c1) in zip(samples, samples[1:]):
            if t0 < first_end or any(t0 < b1 and t1 > b0 for b0, b1 in busy):
                continue
            idle_cpu += c1 - c0
            idle_wall += t1 - t0
        cli_wall, cli_engine = cli_applies(paths, 3)
        steady = cycles[1:] or cycles
        result = {
            "ran": {"minutes": args.minutes, "interval_s": args.interval, "manifests": args.manifests,
                    "resources_each": args.resources, "ccm": " ".join(os.path.basename(a) for a in ccm_argv()[1:]),
                    "python": sys.version.split()[0], "scheduled_cycles": len(cycles), "exit_code": rc},
            "rss_mb": {"after_first_cycle": round(base_rss / 2**20, 2), "end": round(last_rss / 2**20, 2),
                       "max": round(max_rss / 2**20, 2), "growth": round((last_rss - base_rss) / 2**20, 2),
                       "max_growth": round((max_rss - base_rss) / 2**20, 2)},
            "idle_cpu_percent": round(100 * idle_cpu / idle_wall, 3) if idle_wall else None,
            "idle_window_s": round(idle_wall, 1),
            "cycle_s": {"first": round(cycles[0], 3), "median": round(statistics.median(steady), 3),
                        "max": round(max(steady), 3)},
            "cycle_engine_s": {"median": round(statistics.median(engine[1:] or engine), 3)},
            "cli_apply_s": {"whole_processes": round(cli_wall, 3), "engine_run_time": round(cli_engine, 3)},
            "ratio_cycle_to_cli": {"whole_processes": round(statistics.median(steady) / cli_wall, 3),
                                   "engine_run_time": round(statistics.median(steady) / cli_engine, 3)
                                   if cli_engine else None,
                                   "engine_to_engine": round(statistics.median(engine[1:] or engine) / cli_engine, 3)
                                   if cli_engine else None},
        }
        print(json.dumps(result, indent=2))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
