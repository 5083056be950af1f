"""Memory over agent-style cycles: one process applies the same manifest of N file
resources K times through the agent's own seam (``ccm.agent.runner``: one root manager,
one worker manager, ``runner.apply`` with external data), as ``ccm agent`` does.

Per cycle: RSS, and (``--traced``) the Python heap still allocated after the cycle
(tracemalloc, after a collection). A leak shows as traced memory growing cycle after
cycle; RSS also carries the allocator's fragmentation and the previous run's events,
which the session store keeps until the next run starts. The first cycle loads the
manifest in full, the next ones from the compiled plan (``ccm.apply.plancache``).

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
    worker = runner.worker_manager(root, log)
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


def cycles(args: argparse.Namespace, runner: Any, worker: Any, manifest: Path, stop: threading.Event,
           proc: Any) -> None:
    first: Optional[Tuple[float, float]] = None
    for i in range(1, args.cycles + 1):
        result = runner.apply(worker, str(manifest), external_data={"cycle": "x"}, health_check_only=False,
                              stop=stop)
        failed = result.summary.failed_resources
        del result
        gc.collect()
        rss = proc.memory_info().rss / 2**20
        traced = tracemalloc.get_traced_memory()[0] / 2**20 if args.traced else 0.0
        first = first or (rss, traced)
        print(f"cycle {i:2d}: RSS {rss:6.1f} MiB ({rss - first[0]:+5.1f})"
              + (f"   traced heap {traced:6.1f} MiB ({traced - first[1]:+5.1f})" if args.traced else "")
              + (f"   {failed} failed" if failed else ""))


if __name__ == "__main__":
    sys.exit(main())
