"""Memory over agent-style cycles: one process applies the same manifest of N file
resources K times through the agent's own seam (``ccm.agent.runner``: one root manager,
a worker's run manager, ``runner.apply`` with external data, ``runner.forget_run`` once
the summary is read), exactly as a ``ccm agent`` worker does.

Per cycle: the peak RSS during the cycle (Linux: the high-water mark is reset before
each cycle through ``/proc/self/clear_refs``), the RSS left once it is over, the number
of objects the collector tracks, and (``--traced``) the Python heap still allocated
after the cycle (tracemalloc, after a collection). A leak shows as traced memory or
objects growing cycle after cycle; RSS also carries the allocator's fragmentation. The
first cycle loads the manifest in full, the next ones from the compiled plan
(``ccm.apply.plancache``). ``--keep-records`` skips ``forget_run`` (what the agent did
before: the previous run's records stayed until the next run started).

    .venv/bin/python bench/bench_cycles.py [--resources 10000] [--cycles 10] [--traced]

Figures, not pass/fail.
"""
from __future__ import annotations

import argparse
import gc
import os
import shutil
import sys
import tempfile
import threading
import tracemalloc
from pathlib import Path
from typing import Any, Optional, Tuple

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench_speed import write_scenario  # noqa: E402 (same directory)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--resources", type=int, default=10000)
    ap.add_argument("--cycles", type=int, default=10)
    ap.add_argument("--traced", action="store_true", help="also trace the Python heap (slower)")
    ap.add_argument("--keep-records", action="store_true",
                    help="keep each run's records until the next run (no forget_run)")
    args = ap.parse_args()

    import psutil

    from ccm.agent import runner
    from ccm.log import UserLogger

    work = Path(tempfile.mkdtemp(prefix="ccm-cycles-"))
    os.environ.setdefault("CCM_CACHE_DIR", str(work / "cache"))
    os.environ.setdefault("CCM_LOCK_DIR", str(work / "locks"))
    _, manifest, _ = write_scenario(args.resources, work)
    log = UserLogger()
    log.quiet = True
    root = runner.root_manager(environ=dict(os.environ), metrics=None, user_log=log, nats_context="CCM")
    root.set_facts({})
    worker = runner.run_manager(root, log)
    stop = threading.Event()
    proc = psutil.Process()
    if args.traced:
        tracemalloc.start()
    print(f"{args.resources} file resources, {args.cycles} cycles in one process ({sys.executable})")
    try:
        cycles(args, runner, worker, manifest, stop, proc)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


def peak_mib() -> Optional[float]:
    """The process's RSS high-water mark since the last ``reset_peak`` (Linux only)."""
    try:
        with open("/proc/self/status", "r", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


def reset_peak() -> bool:
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as fh:
            fh.write("5")   # 5: reset the peak RSS to the current RSS
        return True
    except OSError:
        return False


def cycles(args: argparse.Namespace, runner: Any, worker: Any, manifest: Path, stop: threading.Event,
           proc: Any) -> None:
    first: Optional[Tuple[float, float, float]] = None
    peaks = []
    for i in range(1, args.cycles + 1):
        resettable = reset_peak()
        result = runner.apply(worker, str(manifest), external_data={"cycle": "x"}, health_check_only=False,
                              stop=stop)
        failed = result.summary.failed_resources
        del result
        if not args.keep_records:
            runner.forget_run(worker)
        gc.collect()
        peak = peak_mib() if resettable else None
        rss = proc.memory_info().rss / 2**20
        traced = tracemalloc.get_traced_memory()[0] / 2**20 if args.traced else 0.0
        first = first or (peak or 0.0, rss, traced)
        if peak is not None:
            peaks.append(peak)
        print(f"cycle {i:2d}: "
              + (f"peak RSS {peak:6.1f} MiB ({peak - first[0]:+5.1f})   " if peak is not None else "")
              + f"RSS after {rss:6.1f} MiB ({rss - first[1]:+5.1f})   objects {len(gc.get_objects()):7d}"
              + (f"   traced heap {traced:6.1f} MiB ({traced - first[2]:+5.1f})" if args.traced else "")
              + (f"   {failed} failed" if failed else ""))
    if len(peaks) >= 2:
        print(f"peak RSS: cycle 2 {peaks[1]:.1f} MiB, cycle {len(peaks)} {peaks[-1]:.1f} MiB "
              f"({peaks[-1] - peaks[1]:+.1f}); highest {max(peaks):.1f} MiB")


if __name__ == "__main__":
    sys.exit(main())
