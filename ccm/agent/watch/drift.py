"""A worker's side of the drift watch: around each apply, and what a re-apply found.

``DriftWatch.before(session, only)`` suspends the watch and collects the run's events
(a session listener: every event, nested manifests' included, as it is recorded);
``after(top_refs, ok, only)`` arms the watches for what the run managed (or resumes
them when it did not finish); ``report(ready)`` says, for each resource a re-apply
ran because its path changed, whether it drifted and whether it was repaired (a noop
resource: reported only), in a log line, the run's events, ``/status`` and the
``agent_drift`` metric.
"""
from __future__ import annotations

import os
import time

from ccm.agent.watch import targets
from ccm.agent.watch.watcher import ManifestWatch
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Callable, Dict, List, Optional, Set


def _message(repaired: bool, noop: bool, observed: bool) -> str:
    if repaired:
        return "Drift repaired"
    if noop:
        return "Drift detected, not repaired (noop)"
    if not observed:   # a health-check-only child: its path changed, nothing of it is observed
        return "Drift detected, not repaired (health-check only)"
    return "Drift detected, repair failed"


KEEP_ENV = "CCM_WATCH_KEEP"   # "0": plan and place the watches again after every full run (the plain twin)


def _paths_key(seen: List[targets.Seen], top_refs: Set[str]) -> Any:
    """What a run's watches are made from (its resources and the paths they manage), as a
    digest: the watch holds no copy of a run's events between runs. None (placed again)
    when a path property is not a plain value."""
    try:
        return (len(seen), hash(frozenset(top_refs)),
                hash(tuple((s.type, s.name, tuple(s.properties.items()) if s.properties else (), s.noop,
                            s.monitor) for s in seen)))
    except TypeError:
        return None


class DriftWatch:
    def __init__(self, *, label: str, log: Any, metrics: Any, request: Callable[[], None], service_poll: float):
        self.label = label
        self.log = log
        self.metrics = metrics
        self.watch = ManifestWatch(log=log, request=request, service_poll=service_poll)
        self._seen: List[targets.Seen] = []
        self._armed_for: Optional[Any] = None   # what the placed watches were made from (steady check)
        self._session: Any = None
        self.last_drift: Optional[Dict[str, Any]] = None
        self.drifts = 0

    def start(self) -> None:
        self.watch.start()

    def stop(self) -> None:
        self.watch.stop()

    def _listen(self, event: Any) -> None:
        try:
            self._seen.append(targets.seen_of(event))
        except Exception:   # never fail a run for the watch
            pass

    def before(self, session: Any, only: Optional[List[str]]) -> None:
        self._seen = []
        self.watch.suspend(set(only) if only is not None else None)
        self._session = session
        session.listeners.append(self._listen)

    def after(self, top_refs: Set[str], ok: bool, only: Optional[List[str]]) -> None:
        if self._session is not None:
            try:
                self._session.listeners.remove(self._listen)
            except ValueError:
                pass
            self._session = None
        if not ok:
            self._seen = []
            self.watch.resume()
            return
        try:
            self._arm(top_refs, only)
        except Exception as exc:   # watching never fails an apply
            self.log.error("Could not watch for drift", error=f"{type(exc).__name__}: {exc}")
            self.watch.resume()
        if only is None:
            self._seen = []   # only a re-apply's events are read again (report): nothing held between runs
        if self.metrics.enabled:
            self.metrics.set("agent_watched_paths", self.watch.paths, manifest=self.label)

    def _arm(self, top_refs: Set[str], only: Optional[List[str]]) -> None:
        """Place the watches for what the run managed. A full run that managed the same
        paths as the run that placed them and changed or failed none keeps them: nothing
        they were placed for moved (planning and placing 10,000 paths again costs a
        scheduled apply about 0.15 s). ``CCM_WATCH_KEEP=0``: plan and place them again
        after every run (the plain twin)."""
        if only is not None:   # a re-apply of some resources: theirs are placed again
            self._armed_for = None
            self.watch.arm(targets.plan(self._seen, top_refs), set(only))
            return
        key = None if os.environ.get(KEEP_ENV) == "0" else _paths_key(self._seen, top_refs)
        steady = not any(s.changed or s.failed for s in self._seen)
        if key is not None and steady and key == self._armed_for and not self.watch.exhausted:
            self.watch.keep()
            return
        self.watch.arm(targets.plan(self._seen, top_refs), None)
        self._armed_for = key

    def report(self, ready: Dict[str, str], top_refs: Set[str]) -> None:
        owned = targets.owners(self._seen, top_refs)
        for ref, path in ready.items():
            events = owned.get(ref, [])
            drifted = [e for e in events if e.changed]
            monitor = [e for e in events if e.monitor]
            if not drifted and not (monitor and path):
                self.log.debug("Watched path changed, no drift", resource=ref, path=path)
                continue
            noop = any(e.noop for e in drifted)
            repaired = bool(drifted) and not noop and not any(e.failed for e in events)
            message = _message(repaired, noop, bool(drifted))
            drifted = drifted or monitor
            self.log.warn(message, resource=ref, path=path or "(polled)",
                          changed=",".join(e.ref for e in drifted))
            self.drifts += 1
            self.watch.repaired(ref)
            self.last_drift = {"path": path, "resource": ref, "when": time.time(), "repaired": repaired}
            self.metrics.inc("agent_drift", manifest=self.label, type=ref.split("#", 1)[0])
        self._seen = []

    def status(self) -> Dict[str, Any]:
        from ccm.gocompat.rfc3339 import rfc3339

        last = None
        if self.last_drift is not None:
            last = dict(self.last_drift, when=rfc3339(int(self.last_drift["when"] * 1e9)))
        return {"watching": self.watch.active, "paths_watched": self.watch.paths, "exhausted": self.watch.exhausted,
                "drifts": self.drifts, "last_drift": last}
