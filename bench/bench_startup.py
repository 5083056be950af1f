"""Start-up time of ``dist/ccm.pyz --version`` against a shiv pyz that does nothing.

Figures, not a pass/fail test (target: warm ccm within 1.3x of the baseline). Both files
run with the same interpreter, in the same run, with ``HOME`` pointing at a scratch dir
(so each extracts under its own ``~/.shiv``) and without PYTHONDONTWRITEBYTECODE (hosts
do not set it; with it, every warm run would recompile). Warm: median of N runs after
one run that extracts. First run: median of a few runs, each into a fresh, empty HOME.

Usage: .venv/bin/python bench/bench_startup.py [--runs N] [--pyz PATH] [--python PY ...]
The baseline is built with shiv under build/bench/ (reused while shiv's version is the
same). ``--python all`` times every pyenv CPython 3.9 to 3.13 found.
"""
from __future__ import annotations

import argparse
import glob
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List

REPO = Path(__file__).resolve().parent.parent
WORK = REPO / "build" / "bench"
NOOP_SOURCE = "def main():\n    return 0\n"


def noop_pyz() -> Path:
    """A shiv pyz whose entry point returns immediately (built once per shiv version)."""
    from shiv import __version__ as shiv_version

    target = WORK / f"noop-shiv-{shiv_version}.pyz"
    if target.exists():
        return target
    src = WORK / "noop-src"
    shutil.rmtree(src, ignore_errors=True)
    src.mkdir(parents=True)
    (src / "noopentry.py").write_text(NOOP_SOURCE)
    shiv = Path(sys.executable).with_name("shiv")
    cmd = [str(shiv) if shiv.exists() else "shiv", "--site-packages", str(src),
           "-e", "noopentry:main", "-o", str(target), "--reproducible"]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return target


def base_python() -> str:
    """This interpreter without the venv around it (no venv site-packages to scan)."""
    return os.path.realpath(sys.executable)


def child_env(home: Path) -> Dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONDONTWRITEBYTECODE", "SHIV_ROOT", "PYTHONPATH", "PYTHONHOME")}
    env["HOME"] = str(home)
    return env


def run_once(python: str, argv: List[str], env: Dict[str, str]) -> float:
    started = time.perf_counter()
    res = subprocess.run([python] + argv, env=env, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE)
    elapsed = time.perf_counter() - started
    if res.returncode != 0:
        raise SystemExit(f"{argv} failed ({res.returncode}): {res.stderr.decode()[-500:]}")
    return elapsed


def median_ms(python: str, argv: List[str], env: Dict[str, str], runs: int) -> float:
    return statistics.median(run_once(python, argv, env) for _ in range(runs)) * 1000


def first_run_ms(python: str, argv: List[str], runs: int) -> float:
    times = []
    for _ in range(runs):
        home = Path(tempfile.mkdtemp(prefix="first-", dir=WORK))
        try:
            times.append(run_once(python, argv, child_env(home)))
        finally:
            shutil.rmtree(home, ignore_errors=True)
    return statistics.median(times) * 1000


def create_cost_ms(base: Path, n: int = 200) -> float:
    """What creating one small file costs here: first runs create ~300 of them."""
    d = Path(tempfile.mkdtemp(prefix="fs-", dir=base))
    try:
        started = time.perf_counter()
        for i in range(n):
            (d / f"f{i}").write_bytes(b"x" * 2000)
        return (time.perf_counter() - started) / n * 1000
    finally:
        shutil.rmtree(d, ignore_errors=True)


def bench(python: str, pyz: Path, noop: Path, runs: int, first_runs: int) -> float:
    home = Path(tempfile.mkdtemp(prefix="warm-", dir=WORK))
    try:
        env = child_env(home)
        ccm = [str(pyz), "--version"]
        base = [str(noop)]
        run_once(python, ccm, env)  # extract, write .pyc
        run_once(python, base, env)
        # interleave so that machine noise hits both alike
        warm_ccm: List[float] = []
        warm_base: List[float] = []
        for _ in range(runs):
            warm_base.append(run_once(python, base, env))
            warm_ccm.append(run_once(python, ccm, env))
        b = statistics.median(warm_base) * 1000
        c = statistics.median(warm_ccm) * 1000
    finally:
        shutil.rmtree(home, ignore_errors=True)
    fb = first_run_ms(python, base, first_runs)
    fc = first_run_ms(python, ccm, first_runs)
    ver = subprocess.run([python, "-c", "import sys; print('%d.%d.%d' % sys.version_info[:3])"],
                         capture_output=True, text=True).stdout.strip()
    print(f"CPython {ver} ({python})")
    print(f"  warm    baseline {b:6.1f} ms   ccm --version {c:6.1f} ms   ratio {c / b:.2f}x"
          f" (target <= 1.30x, median of {runs})")
    print(f"  first   baseline {fb:6.1f} ms   ccm --version {fc:6.1f} ms   (fresh HOME, "
          f"median of {first_runs})")
    return c / b


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=21)
    ap.add_argument("--first-runs", type=int, default=5)
    ap.add_argument("--pyz", default=str(REPO / "dist" / "ccm.pyz"))
    ap.add_argument("--python", action="append", default=[],
                    help="interpreter(s) to run the pyz with; 'all' = pyenv 3.9 to 3.13")
    args = ap.parse_args()
    pyz = Path(args.pyz)
    if not pyz.exists():
        subprocess.run([sys.executable, str(REPO / "build_zipapp.py")], check=True)
    WORK.mkdir(parents=True, exist_ok=True)
    noop = noop_pyz()
    pythons = args.python or [base_python()]
    if pythons == ["all"]:
        pythons = sorted(
            (p for minor in range(9, 14)
             for p in glob.glob(f"/root/.pyenv/versions/3.{minor}*/bin/python3.{minor}")),
            key=lambda p: int(p.rsplit(".", 1)[1]),
        )
    size = pyz.stat().st_size
    print(f"{pyz}: {size} bytes ({size / 1048576:.2f} MiB)")
    print(f"scratch {WORK}: {create_cost_ms(WORK):.2f} ms per file created "
          "(first runs unpack ~300 files)")
    for python in pythons:
        bench(python, pyz, noop, args.runs, args.first_runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
