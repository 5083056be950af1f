"""Issue #16's figures in one run: ccm.pyz against a plain-Python loop on the same interpreter.

Every figure is a ratio of two fresh processes timed in this run, so machine speed and
load cancel out; each is given in wall time and in CPU time (user + sys of the process,
from wait4), which a busy machine disturbs far less. The interpreter is ``/usr/bin/python3`` when present (a distro build:
pyenv builds import extra modules at start and hide ccm's fixed cost), else this one.

* apply, first and steady, N file resources (default 1, 1000, 10000, 20000): ``ccm.pyz
  apply`` against a loop that, per file, stats, reads, compares content/owner/mode and,
  when different, writes a temp file, fsyncs it and renames it over the target. Steady:
  median of ``--runs`` runs with nothing to change (warm ccm cache, as under cron).
  Per-resource steady cost from (t(N) - t(1)) / (N - 1): flat means no growth with N.
* batching (issue 16): a first run at N=1,000 with its file writes batched (the default:
  one sync pass per batch) against the same run with ``CCM_WRITE_BATCH=0`` (a full fsync
  per file), interleaved; both also against the loop.
* start-up: ``ccm.pyz --version`` against a shiv zipapp whose entry point returns at once.
* peak RSS of ``apply`` at N=10,000 with an empty (cold) ccm cache.
* a 4,000-file ``require`` chain against the same manifest without requires, in the
  memory and in the directory session store (``CCM_SESSION_STORE``), steady runs.

    .venv/bin/python bench/bench_speed.py [--sizes 1,1000,10000,20000] [--runs 5]
        [--chain 4000] [--python PATH] [--pyz PATH] [--json OUT] [--templated]

``--templated``: the apply figures on a manifest whose every file content is a template
(``TEMPLATE``: ``Data.by`` and the hostname fact) rendering to the bytes the loop writes
(issue 27's targets: steady <= 2.0x at N=1,000, <= 2.5x at 10,000, first <= 1.2x).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from bench_startup import WORK, noop_pyz  # the bare shiv zipapp (same directory)

REPO = Path(__file__).resolve().parent.parent

LOOP = r'''
import json, os, sys
spec = json.load(open(sys.argv[1]))
changed = 0
for path, content, uid, gid, mode in spec:
    data = content.encode()
    try:
        st = os.stat(path)
        with open(path, "rb") as fh:
            ok = (fh.read() == data and st.st_uid == uid and st.st_gid == gid
                  and (st.st_mode & 0o7777) == mode)
    except FileNotFoundError:
        ok = False
    if not ok:
        tmp = os.path.join(os.path.dirname(path), "." + os.path.basename(path) + ".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            os.write(fd, data)
            os.fchown(fd, uid, gid)
            os.fchmod(fd, mode)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.rename(tmp, path)
        changed += 1
print(changed)
'''

def interpreter(given: Optional[str]) -> str:
    if given:
        return given
    return "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else os.path.realpath(sys.executable)


CPU: Dict[Tuple[str, ...], List[float]] = {}  # argv -> CPU seconds (user + sys) of each run


def run(argv: List[str], env: Dict[str, str]) -> Tuple[float, float]:
    """(wall seconds, peak RSS MiB) of one fresh process; its CPU time goes to CPU."""
    started = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    _pid, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - started
    assert proc.stderr is not None
    err = proc.stderr.read().decode(errors="replace")
    proc.stderr.close()
    if status != 0:
        raise SystemExit(f"{' '.join(argv[:4])} failed ({status}): {err[-2000:]}")
    CPU.setdefault(tuple(argv), []).append(usage.ru_utime + usage.ru_stime)
    return elapsed, usage.ru_maxrss / 1024.0


def cpu(argv: List[str], last: int) -> float:
    """Median CPU seconds of the ``last`` runs of argv."""
    return statistics.median(CPU[tuple(argv)][-last:])


def median(argv: List[str], env: Dict[str, str], runs: int) -> float:
    return statistics.median(run(argv, env)[0] for _ in range(runs))


# --templated: every content a template over Data and Facts, as real manifests are; it
# renders to the bytes the loop writes (the hostname fact is socket.gethostname())
TEMPLATE = "# managed by {{ Data.by }} on {{ Facts.host.info.hostname }}\n"


def write_scenario(n: int, work: Path, chain: bool = False,
                   templated: bool = False) -> Tuple[Path, Path, Path]:
    """(files dir, manifest, loop spec) for n file resources; chain: each requires the previous;
    templated: each content is ``TEMPLATE`` + the plain line (the loop gets it rendered)."""
    import socket

    target = work / "files"
    target.mkdir(parents=True, exist_ok=True)
    uid, gid = os.getuid(), os.getgid()
    head = ["data:", "  by: ccm"] if templated else []
    rendered = TEMPLATE.replace("{{ Data.by }}", "ccm").replace("{{ Facts.host.info.hostname }}",
                                                                 socket.gethostname())
    lines = head + ["ccm:", "  resources:", "    - file:", "        - defaults:", "            ensure: present",
             f"            owner: \"{uid}\"", f"            group: \"{gid}\"", "            mode: \"0644\""]
    spec = []
    prev = ""
    for i in range(n):
        path = str(target / f"f{i:05d}.conf")
        content = f"setting_{i} = {i * 7}\n"
        lines += [f"        - {path}:", f"            content: {json.dumps(TEMPLATE + content if templated else content)}"]
        if templated:
            content = rendered + content
        if chain and prev:
            lines.append(f"            require: [\"file#{prev}\"]")
        prev = path
        spec.append((path, content, uid, gid, 0o644))
    manifest = work / ("chain.yaml" if chain else "manifest.yaml")
    manifest.write_text("\n".join(lines) + "\n")
    loop_spec = work / "loop.json"
    loop_spec.write_text(json.dumps(spec))
    return target, manifest, loop_spec


class Bench:
    def __init__(self, python: str, pyz: Path, runs: int):
        self.python = python
        self.pyz = pyz
        self.runs = runs
        self.scratch = Path(tempfile.mkdtemp(prefix="speed-", dir=WORK))
        self.home = self.scratch / "home"
        self.home.mkdir()
        self.cache = self.scratch / "cache"
        self.locks = self.scratch / "locks"
        self.locks.mkdir(mode=0o700)
        self.results: Dict[str, object] = {}
        self.first_max = 10000
        self.unbuffered = False   # keep PYTHONUNBUFFERED from the environment
        self.rss_runs = 1  # peak RSS barely varies; a first run at N=10,000 is slow
        self.templated = False   # --templated: the apply figures on the templated manifest

    def env(self, cache: Optional[Path] = None, **extra: str) -> Dict[str, str]:
        # as cron or a systemd timer runs it: no bytecode or path overrides, and buffered output
        # (PYTHONUNBUFFERED, set in many container images, makes every status line a write(2);
        # --unbuffered keeps it to measure that)
        dropped = ("PYTHONDONTWRITEBYTECODE", "SHIV_ROOT", "PYTHONPATH", "PYTHONHOME", "CCM_SESSION_STORE",
                   "VIRTUAL_ENV", "CCM_TEMPLATE_CACHE") + (() if self.unbuffered else ("PYTHONUNBUFFERED",))
        env = {k: v for k, v in os.environ.items() if k not in dropped}
        # its own lock directory: another ccm on a shared machine holds /run/ccm's run lock
        env.update(HOME=str(self.home), NO_COLOR="1", CCM_CACHE_DIR=str(cache or self.cache),
                   CCM_LOCK_DIR=str(self.locks))
        env.update(extra)
        return env

    def ccm(self, *args: str) -> List[str]:
        return [self.python, str(self.pyz)] + list(args)

    def loop(self, work: Path) -> List[str]:
        script = work / "loop.py"
        script.write_text(LOOP)
        return [self.python, str(script), str(work / "loop.json")]

    def warm(self) -> None:
        run(self.ccm("--version"), self.env())  # unpack, write .pyc

    def startup(self) -> None:
        noop = [self.python, str(noop_pyz())]
        ccm = self.ccm("--version")
        env = self.env()
        run(noop, env)
        run(ccm, env)
        base: List[float] = []
        mine: List[float] = []
        for _ in range(max(self.runs * 3, 15)):  # interleaved: noise hits both alike
            base.append(run(noop, env)[0])
            mine.append(run(ccm, env)[0])
        b, c = statistics.median(base) * 1000, statistics.median(mine) * 1000
        bc, cc = cpu(noop, len(base)) * 1000, cpu(ccm, len(mine)) * 1000
        self.results["version"] = {"noop_ms": b, "ccm_ms": c, "ratio": c / b,
                                   "noop_cpu_ms": bc, "ccm_cpu_ms": cc, "cpu_ratio": cc / bc}
        print(f"start-up  bare shiv {b:6.1f} ms   ccm --version {c:6.1f} ms   ratio {c / b:.2f}x"
              f"  (target <= 1.00x; median of {len(base)})")
        print(f"          CPU time: bare shiv {bc:6.1f} ms   ccm --version {cc:6.1f} ms   "
              f"ratio {cc / bc:.2f}x")

    @property
    def prefix(self) -> str:
        return "templated_" if self.templated else ""

    def want(self, phase: str, n: int) -> str:
        """The target ratio of one apply figure (issue 16; issue 27 for the templated manifest)."""
        if phase == "first":
            return ("1.2x" if self.templated else "1.0x") if n == 1000 else ""
        if self.templated:
            return {1000: "2.0x", 10000: "2.5x"}.get(n, "")
        return {1: "1.5x", 1000: "1.5x", 10000: "2.0x"}.get(n, "")

    def apply_sizes(self, sizes: List[int]) -> None:
        if self.templated:
            print(f"templated manifest: every content is {TEMPLATE!r} + the plain line")
        print(f"{'N':>6} {'phase':>6} {'ccm ms':>9} {'loop ms':>9} {'ratio':>6}  {'target':>6}"
              f"  {'ccm CPU':>9} {'loop CPU':>9} {'ratio':>6}")
        steady: Dict[int, Tuple[float, float]] = {}
        for n in sizes:
            work = Path(tempfile.mkdtemp(prefix=f"n{n}-", dir=self.scratch))
            try:
                target, manifest, _ = write_scenario(n, work, templated=self.templated)
                apply = self.ccm("apply", "--no-report", str(manifest))
                loop = self.loop(work)
                env = self.env()
                firsts_c, firsts_l = [], []
                # first runs: fsync-bound, 1 above N=1,000, none above 10,000 (only the
                # steady per-resource cost is asked for there)
                for _ in range(0 if n > self.first_max else 1 if n >= 10000 else 3):
                    shutil.rmtree(target)
                    target.mkdir()
                    firsts_c.append(run(apply, env)[0])
                    shutil.rmtree(target)
                    target.mkdir()
                    firsts_l.append(run(loop, env)[0])
                if not firsts_c:  # the steady runs need the files
                    run(apply, env)
                else:
                    fc, fl = statistics.median(firsts_c), statistics.median(firsts_l)
                    fcc, flc = cpu(apply, len(firsts_c)), cpu(loop, len(firsts_l))
                    self.results[f"{self.prefix}first_{n}"] = {"ccm": fc, "loop": fl, "ccm_cpu": fcc,
                                                  "loop_cpu": flc}
                    print(f"{n:>6} {'first':>6} {fc * 1000:9.1f} {fl * 1000:9.1f} {fc / fl:6.2f}"
                          f"  {self.want('first', n):>6}  {fcc * 1000:9.1f} {flc * 1000:9.1f}"
                          f" {fcc / flc:6.2f}")
                sc, sl = [], []
                runs = self.runs * 3 if n <= 1000 else self.runs  # cheap: more runs, less noise
                for _ in range(runs):
                    sc.append(run(apply, env)[0])
                    sl.append(run(loop, env)[0])
                c, lo = statistics.median(sc), statistics.median(sl)
                cc, loc = cpu(apply, runs), cpu(loop, runs)
                steady[n] = (c, lo, cc, loc)
                self.results[f"{self.prefix}steady_{n}"] = {"ccm": c, "loop": lo, "ccm_cpu": cc,
                                                            "loop_cpu": loc}
                want = self.want("steady", n)
                print(f"{n:>6} {'steady':>6} {c * 1000:9.1f} {lo * 1000:9.1f} {c / lo:6.2f}  {want:>6}"
                      f"  {cc * 1000:9.1f} {loc * 1000:9.1f} {cc / loc:6.2f}")
            finally:
                shutil.rmtree(work, ignore_errors=True)
        if 1 in steady:
            c1, l1, cc1, lc1 = steady[1]
            for n in sorted(steady):
                if n > 1:
                    pc = (steady[n][0] - c1) / (n - 1) * 1e6
                    pl = (steady[n][1] - l1) / (n - 1) * 1e6
                    pcc = (steady[n][2] - cc1) / (n - 1) * 1e6
                    plc = (steady[n][3] - lc1) / (n - 1) * 1e6
                    self.results[f"{self.prefix}per_resource_{n}"] = {"ccm_us": pc, "loop_us": pl,
                                                         "ccm_cpu_us": pcc, "loop_cpu_us": plc}
                    print(f"per resource, steady, N={n:>6}: ccm {pc:6.1f} us   loop {pl:5.1f} us"
                          f"   (CPU: ccm {pcc:6.1f} us   loop {plc:5.1f} us)")

    def batching(self, n: int = 1000, runs: int = 3) -> None:
        work = Path(tempfile.mkdtemp(prefix=f"batch{n}-", dir=self.scratch))
        try:
            target, manifest, _ = write_scenario(n, work)
            apply = self.ccm("apply", "--no-report", str(manifest))
            loop = self.loop(work)
            unbatched = apply + ["--no-report"]   # same run, its own key in CPU
            envs = {"batched": self.env(), "unbatched": self.env(CCM_WRITE_BATCH="0"), "loop": self.env()}
            argvs = {"batched": apply, "unbatched": unbatched, "loop": loop}
            walls: Dict[str, List[float]] = {k: [] for k in argvs}
            for _ in range(runs):
                for key, argv in argvs.items():
                    shutil.rmtree(target)
                    target.mkdir()
                    walls[key].append(run(argv, envs[key])[0])
            w = {k: statistics.median(v) * 1000 for k, v in walls.items()}
            c = {k: cpu(argvs[k], runs) * 1000 for k in argvs}
            self.results[f"batching_{n}"] = {"wall_ms": w, "cpu_ms": c}
            print(f"first run N={n}: batched {w['batched']:.1f} ms (CPU {c['batched']:.1f})   unbatched "
                  f"{w['unbatched']:.1f} ms (CPU {c['unbatched']:.1f})   loop {w['loop']:.1f} ms "
                  f"(CPU {c['loop']:.1f})   batched/loop {w['batched'] / w['loop']:.2f}x wall, "
                  f"{c['batched'] / c['loop']:.2f}x CPU; median of {runs}")
        finally:
            shutil.rmtree(work, ignore_errors=True)

    def rss(self, n: int) -> None:
        work = Path(tempfile.mkdtemp(prefix=f"rss{n}-", dir=self.scratch))
        try:
            _, manifest, _ = write_scenario(n, work)
            apply = self.ccm("apply", "--no-report", str(manifest))
            peaks = []
            for i in range(self.rss_runs):
                cold = work / f"cold-cache-{i}"
                _, first = run(apply, self.env(cache=cold))  # first run, cold cache
                shutil.rmtree(cold)
                _, steady = run(apply, self.env(cache=cold))  # steady run, cold cache
                _, warm = run(apply, self.env(cache=cold))  # steady run, warm cache (compiled plan)
                shutil.rmtree(cold)
                peaks.append((first, steady, warm))
            first = statistics.median(p[0] for p in peaks)
            steady = statistics.median(p[1] for p in peaks)
            warm = statistics.median(p[2] for p in peaks)
            self.results[f"rss_{n}"] = {"first_mb": first, "steady_mb": steady, "steady_warm_mb": warm}
            print(f"peak RSS N={n}, cold cache: first run {first:.1f} MiB, steady run {steady:.1f} MiB"
                  "  (target < 60 MiB)")
            print(f"peak RSS N={n}, warm cache: steady run {warm:.1f} MiB")
        finally:
            shutil.rmtree(work, ignore_errors=True)

    def chain(self, n: int, stores: Tuple[str, ...] = ("memory", "directory")) -> None:
        work = Path(tempfile.mkdtemp(prefix=f"chain{n}-", dir=self.scratch))
        try:
            _, plain, _ = write_scenario(n, work)
            _, chained, _ = write_scenario(n, work, chain=True)
            for store in stores:
                extra = {}
                if store == "directory":
                    extra["CCM_SESSION_STORE"] = str(work / "session")
                env = self.env(**extra)
                a = self.ccm("apply", "--no-report", str(plain))
                b = self.ccm("apply", "--no-report", str(chained))
                run(a, env)
                run(b, env)
                ta, tb = [], []
                # the memory store's runs are cheap (~0.2 s): more of them, less noise in a ratio of
                # two close figures; the directory store's take ~13 s each
                runs = max(self.runs * 3, 15) if store == "memory" else max(1, self.runs // 2)
                for _ in range(runs):
                    shutil.rmtree(work / "session", ignore_errors=True)
                    ta.append(run(a, env)[0])
                    shutil.rmtree(work / "session", ignore_errors=True)
                    tb.append(run(b, env)[0])
                pa, pb = statistics.median(ta), statistics.median(tb)
                ca, cb = cpu(a, len(ta)), cpu(b, len(tb))
                self.results[f"chain_{store}"] = {"plain": pa, "chain": pb, "ratio": pb / pa,
                                                  "plain_cpu": ca, "chain_cpu": cb}
                print(f"require chain N={n}, {store:>9} store: no requires {pa * 1000:8.1f} ms   "
                      f"chain {pb * 1000:8.1f} ms   ratio {pb / pa:.2f}x  (target <= 1.10x)"
                      f"   CPU ratio {cb / ca:.2f}x; median of {runs}")
        finally:
            shutil.rmtree(work, ignore_errors=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="1,1000,10000,20000")
    ap.add_argument("--runs", type=int, default=5, help="steady repetitions per figure")
    ap.add_argument("--chain", type=int, default=4000)
    ap.add_argument("--chain-dir", type=int, default=None,
                    help="chain length for the directory store (default: --chain)")
    ap.add_argument("--rss", type=int, default=10000)
    ap.add_argument("--python", default=None)
    ap.add_argument("--pyz", default=str(REPO / "dist" / "ccm.pyz"))
    ap.add_argument("--only", default="startup,apply,batching,rss,chain")
    ap.add_argument("--first-max", type=int, default=10000, help="first runs only up to this N")
    ap.add_argument("--unbuffered", action="store_true",
                    help="keep PYTHONUNBUFFERED if set (default: removed, as cron runs ccm)")
    ap.add_argument("--templated", action="store_true",
                    help="apply figures on a manifest whose every content is a template over Data and Facts")
    ap.add_argument("--json", default=None, help="also write the figures here")
    args = ap.parse_args()
    pyz = Path(args.pyz)
    if not pyz.exists():
        subprocess.run([sys.executable, str(REPO / "build_zipapp.py")], check=True)
    WORK.mkdir(parents=True, exist_ok=True)
    python = interpreter(args.python)
    ver = subprocess.run([python, "-c", "import sys; print(sys.version.split()[0])"],
                         capture_output=True, text=True, check=True).stdout.strip()
    print(f"{pyz} on CPython {ver} ({python}); steady figures: median of {args.runs}")
    bench = Bench(python, pyz, args.runs)
    bench.first_max = args.first_max
    bench.unbuffered = args.unbuffered
    bench.templated = args.templated
    only = set(args.only.split(","))
    try:
        bench.warm()
        if "startup" in only:
            bench.startup()
        if "apply" in only:
            bench.apply_sizes([int(s) for s in args.sizes.split(",") if s])
        if "batching" in only:
            bench.batching()
        if "rss" in only and args.rss:
            bench.rss(args.rss)
        if "chain" in only and args.chain:
            chain_dir = args.chain if args.chain_dir is None else args.chain_dir
            if chain_dir == args.chain:
                bench.chain(args.chain)
            else:
                bench.chain(args.chain, ("memory",))
                if chain_dir:
                    bench.chain(chain_dir, ("directory",))
    finally:
        shutil.rmtree(bench.scratch, ignore_errors=True)
    if args.json:
        Path(args.json).write_text(json.dumps(bench.results, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
