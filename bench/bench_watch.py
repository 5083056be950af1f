"""The agent's drift watch (issue 29): repair latency, idle CPU and memory with N watched files.

One real `ccm agent` process (`watch: true`, interval 1h so nothing but the watch
applies) manages N files (default 10,000, in directories of 100) plus a directory tree
of 100 files. After its first apply armed the watches:

* repair latency: E edits (default 20) of a random managed file, each timed from the
  write to the file holding its managed content again (polled every 2 ms): median, p99;
* a deleted tree: `rm -rf` of the 100-file directory, timed until every file is back;
* idle CPU: the agent's CPU seconds over IDLE seconds (default 20) of no change;
* a fight: another process rewriting one managed file in a tight loop for FIGHT seconds
  (default 10; the issue's figure is 60): the agent's CPU share and its repairs;
* memory: the agent's RSS with watching, against a second agent on the same manifest
  without it (both start on files a first agent created; `--no-compare` skips both), and
  the Python heap an armed watch of these paths holds (tracemalloc, in this process);
* what watching adds to every full apply: planning and placing the watches for the
  run's events (timed in this process on the same paths).

    python bench/bench_watch.py [--files N] [--edits E] [--idle S] [--fight S] [--no-compare]

ccm runs as users run it: dist/ccm.pyz when built, else `python -m ccm`. Figures, not
pass/fail. Needs Linux (inotify, /proc).
"""
from __future__ import annotations

import argparse
import getpass
import grp
import json
import os
import random
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONTENT = "managed\n"
TICK = os.sysconf("SC_CLK_TCK")


def ccm_argv() -> list:
    pyz = os.path.join(ROOT, "dist", "ccm.pyz")
    return [sys.executable, pyz] if os.path.exists(pyz) else [sys.executable, "-m", "ccm"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def write_manifest(work: str, n: int) -> tuple:
    import yaml

    user, group = getpass.getuser(), grp.getgrgid(os.getgid()).gr_name
    own = {"owner": user, "group": group, "mode": "0644"}
    files = [os.path.join(work, "out", f"d{i // 100}", f"f{i}.conf") for i in range(n)]
    tree = os.path.join(work, "out", "tree")
    tree_files = [os.path.join(tree, f"t{i}.conf") for i in range(100)]
    dirs = [os.path.join(work, "out")] + sorted({os.path.dirname(f) for f in files})
    resources = [{"file": {"name": d, "ensure": "directory", **dict(own, mode="0755")}} for d in dirs]
    resources.append({"file": {"name": tree, "ensure": "directory", **dict(own, mode="0755")}})
    resources += [{"file": {"name": f, "ensure": "present", "content": CONTENT, **own}} for f in files + tree_files]
    path = os.path.join(work, "manifest.yaml")
    with open(path, "w") as fh:
        yaml.safe_dump({"ccm": {"resources": resources}}, fh)
    return path, files, tree, tree_files


class Agent:
    def __init__(self, work: str, manifest: str, watch: bool) -> None:
        import yaml

        self.port = free_port()
        cfg = os.path.join(work, f"config-{watch}.yaml")
        with open(cfg, "w") as fh:
            yaml.safe_dump({"interval": "1h", "manifests": [manifest], "monitor_port": self.port, "watch": watch,
                            "cache_dir": os.path.join(work, f"cache-{watch}"), "log_level": "warn"}, fh)
        self.log = open(os.path.join(work, f"agent-{watch}.log"), "w+")
        env = dict(os.environ, PYTHONPATH=ROOT)
        self.proc = subprocess.Popen(ccm_argv() + ["agent", "--config", cfg], stdout=self.log,
                                     stderr=subprocess.STDOUT, env=env, cwd=work)

    def status(self) -> dict:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/status", timeout=5) as resp:
            return json.loads(resp.read())

    def wait_armed(self, paths: int, timeout: float = 600.0) -> dict:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                st = self.status()["manifests"]
                if st and st[0]["last_error"]:
                    raise SystemExit(f"agent: {st[0]['last_error']}")
                if st and st[0]["applies"] >= 1 and st[0]["watch"].get("paths_watched", paths) >= paths:
                    return st[0]
            except OSError:
                pass
            time.sleep(0.2)
        raise SystemExit(f"agent did not finish its first apply; see {self.log.name}")

    def cpu(self) -> float:
        with open(f"/proc/{self.proc.pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / TICK

    def rss_mib(self) -> float:
        with open(f"/proc/{self.proc.pid}/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
        return 0.0

    def repairs(self) -> int:
        self.log.flush()
        with open(self.log.name) as fh:
            return fh.read().count("Drift repaired")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.log.close()


def managed(path: str) -> bool:
    try:
        with open(path) as fh:
            return fh.read() == CONTENT
    except OSError:
        return False


def until(pred, timeout: float = 30.0) -> float:
    started = time.monotonic()
    while not pred():
        if time.monotonic() - started > timeout:
            return float("inf")
        time.sleep(0.002)
    return time.monotonic() - started


def edits(files: list, count: int) -> list:
    rng = random.Random(29)
    out = []
    for _ in range(count):
        path = rng.choice(files)
        with open(path, "w") as fh:
            fh.write("hand edited\n")
        out.append(until(lambda path=path: managed(path)))
        time.sleep(0.3)   # past the debounce: each edit its own repair
    return out


def fight(path: str, seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        with open(path, "w") as fh:
            fh.write("theirs\n")


def p99(values: list) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(0.99 * (len(ordered) - 1))))]


def arm_cost(files: list, tree_files: list) -> tuple:
    """(seconds the watch adds to a full apply that changed something: planning and placing
    the watches of the run's events, MiB of Python heap the armed watch holds, seconds it adds
    to a steady apply: comparing its paths and keeping the watches), in this process, on the
    same paths the agent watches."""
    import gc
    import tracemalloc

    sys.path.insert(0, ROOT)
    from ccm.agent.watch import targets
    from ccm.agent.watch.watcher import ManifestWatch

    class Quiet:
        def __getattr__(self, name: str):
            return lambda *a, **kw: None

    seen = [targets.Seen("file", f, {}, False) for f in files + tree_files]
    top = {s.ref for s in seen}
    watch = ManifestWatch(log=Quiet(), request=lambda: None, service_poll=3600.0)
    watch.start()
    try:
        started = time.perf_counter()
        for _ in range(3):
            watch.arm(targets.plan(seen, top))
        seconds = (time.perf_counter() - started) / 3
        from ccm.agent.watch.drift import _paths_key

        armed_for = _paths_key(seen, top)
        started = time.perf_counter()
        for _ in range(3):   # a steady apply: the same paths, none changed (DriftWatch._arm)
            if _paths_key(seen, top) == armed_for:
                watch.keep()
        kept = (time.perf_counter() - started) / 3
        watch.arm(targets.Plan([], [], [], set()))
        gc.collect()
        tracemalloc.start()
        base = tracemalloc.get_traced_memory()[0]
        watch.arm(targets.plan(seen, top))   # the events are the run's: the watch keeps its plan and index
        del seen
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - base
        tracemalloc.stop()
        return seconds, held / (1 << 20), kept
    finally:
        watch.stop()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--files", type=int, default=10000)
    ap.add_argument("--edits", type=int, default=20)
    ap.add_argument("--idle", type=float, default=20.0)
    ap.add_argument("--fight", type=float, default=10.0)
    ap.add_argument("--no-compare", action="store_true")
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="ccm-bench-watch-")
    figures: dict = {"files": args.files + 100}
    try:
        manifest, files, tree, tree_files = write_manifest(work, args.files)
        if not args.no_compare:   # the files exist before either measured agent starts: both first applies alike
            first = Agent(work, manifest, watch=False)
            try:
                first.wait_armed(0)
            finally:
                first.stop()
        agent = Agent(work, manifest, watch=True)
        try:
            started = time.monotonic()
            st = agent.wait_armed(args.files)
            figures["first_apply_s"] = round(time.monotonic() - started, 2)
            figures["paths_watched"] = st["watch"]["paths_watched"]
            time.sleep(2.0)
            figures["rss_watch_mib"] = round(agent.rss_mib(), 1)
            lat = edits(files, args.edits)
            figures["edit_repair_median_s"] = round(statistics.median(lat), 3)
            figures["edit_repair_p99_s"] = round(p99(lat), 3)
            time.sleep(0.5)
            shutil.rmtree(tree)
            figures["tree_repair_s"] = round(until(lambda: all(managed(f) for f in tree_files)), 3)
            time.sleep(2.0)
            cpu0, t0 = agent.cpu(), time.monotonic()
            time.sleep(args.idle)
            figures["idle_cpu_pct"] = round(100 * (agent.cpu() - cpu0) / (time.monotonic() - t0), 2)
            before, cpu0, t0 = agent.repairs(), agent.cpu(), time.monotonic()
            fight(files[0], args.fight)
            figures["fight_cpu_pct"] = round(100 * (agent.cpu() - cpu0) / (time.monotonic() - t0), 2)
            figures["fight_seconds"] = args.fight
            figures["fight_repairs"] = agent.repairs() - before
            seconds, heap, kept = arm_cost(files, tree_files)
            figures["kept_per_apply_s"] = round(kept, 3)   # a steady apply keeps the placed watches
            figures["arm_per_apply_s"], figures["watch_heap_mib"] = round(seconds, 3), round(heap, 1)
        finally:
            agent.stop()
        if not args.no_compare:
            plain = Agent(work, manifest, watch=False)
            try:
                plain.wait_armed(0)
                time.sleep(2.0)
                figures["rss_plain_mib"] = round(plain.rss_mib(), 1)
                cpu0, t0 = plain.cpu(), time.monotonic()
                time.sleep(min(args.idle, 10.0))
                figures["idle_cpu_plain_pct"] = round(100 * (plain.cpu() - cpu0) / (time.monotonic() - t0), 2)
            finally:
                plain.stop()
            figures["watch_memory_mib"] = round(figures["rss_watch_mib"] - figures["rss_plain_mib"], 1)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
