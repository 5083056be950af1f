"""A fleet of simulated hosts publishing reports through the real publishing code.

Each simulated run is what ``ccm apply --publish-report`` hands the publisher after a
run: a result (events and their summary) and a ``RunContext``; ``ReportPublisher.finished``
then builds, checks, queues and delivers exactly as on a host (no reimplementation).
Used by ``bench/bench_reports.py`` and the cluster tests.
"""
from __future__ import annotations

import os
import threading
import time
from typing import Any, Dict, List, Optional, Sequence

from ccm.fleet.publish import Delivery, ReportPublisher, RunContext
from ccm.fleet.queue import ReportQueue
from ccm.model.events import SessionSummary, TransactionEvent

ROLES = ("web", "db", "cache")


class Result:
    def __init__(self, events: List[Any]):
        self.events = events
        self.summary = SessionSummary.build(events)


def hostname(i: int) -> str:
    return f"host{i:05d}.example.net"


def run_result(i: int, manifest: int, failing: bool, resources: int = 20) -> Result:
    events: List[Any] = [TransactionEvent("file", f"/etc/app/{manifest}/f{r}.conf") for r in range(resources - 2)]
    events.append(TransactionEvent("service", f"app{manifest}", changed=(i + manifest) % 7 == 0))
    if failing and manifest == 0:
        events.append(TransactionEvent("package", "app-server", failed=True,
                                       errors=[f"apt-get install app-server exited 100 on {hostname(i)}"]))
    else:
        events.append(TransactionEvent("exec", f"check-{manifest}"))
    return Result(events)


def context(i: int, manifest: int, exit_code: int) -> RunContext:
    return RunContext(f"/etc/ccm/manifest-{manifest}.yaml", manifest_sha256=f"{manifest:064x}", exit_code=exit_code,
                      hostname=hostname(i), labels={"role": ROLES[i % len(ROLES)], "dc": f"dc{i % 4}"})


class Fleet:
    """``hosts`` hosts, ``manifests`` manifests each; ``failing`` of them fail manifest 0."""

    def __init__(self, hosts: int, manifests: int = 3, failing: int = 0, *, state_root: str,
                 environ: Optional[Dict[str, str]] = None):
        self.hosts, self.manifests = hosts, manifests
        self.failing = set(range(0, hosts, max(1, hosts // failing))[:failing]) if failing else set()
        self.state_root = state_root
        self.environ = dict(os.environ if environ is None else environ)
        self.deliveries: Dict[int, List[Delivery]] = {}
        self.warnings: List[str] = []
        self._lock = threading.Lock()

    def queue_of(self, i: int) -> ReportQueue:
        return ReportQueue(os.path.join(self.state_root, f"h{i:05d}"))

    def run_host(self, i: int, publisher: Optional[ReportPublisher] = None) -> List[Delivery]:
        """One run of every manifest of host ``i`` (a fresh publisher unless one is given)."""
        own = publisher is None
        pub = publisher or ReportPublisher("jetstream", environ=self.environ, queue=self.queue_of(i),
                                           warn=self._warn)
        out = []
        try:
            for m in range(self.manifests):
                failing = i in self.failing
                out.append(pub.finished(run_result(i, m, failing), context(i, m, 1 if failing and m == 0 else 0)))
        finally:
            if own:
                pub.close()
        with self._lock:
            self.deliveries.setdefault(i, []).extend(out)
        return out

    def _warn(self, line: str) -> None:
        with self._lock:
            self.warnings.append(line)

    def run(self, hosts: Sequence[int], workers: int = 4, *, shared: bool = False) -> float:
        """Every host of ``hosts`` once, from ``workers`` threads; seconds taken.

        ``shared``: one publisher (connection, queue) per thread, as a load generator;
        else a fresh publisher per host run, as a cron run is.
        """
        todo = list(hosts)
        lock = threading.Lock()

        def work(w: int) -> None:
            pub = None
            if shared:
                pub = ReportPublisher("jetstream", environ=self.environ, warn=self._warn,
                                      queue=ReportQueue(os.path.join(self.state_root, f"worker{w}")))
            try:
                while True:
                    with lock:
                        if not todo:
                            return
                        i = todo.pop(0)
                    self.run_host(i, pub)
            finally:
                if pub is not None:
                    pub.close()

        started = time.monotonic()
        threads = [threading.Thread(target=work, args=(w,), daemon=True) for w in range(workers)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return time.monotonic() - started
