"""One manifest's drift watch: a thread on one inotify instance.

Life cycle, driven by the worker: ``suspend(refs)`` before any apply (events read
while it runs are its own writes and are dropped), ``arm(plan, refs)`` after it (the
queue is drained first, under the same lock the reader holds, so nothing the apply
wrote is ever taken for drift; then the watches are placed for the plan's paths),
``resume()`` when the apply did not finish. A change to a watched path marks its
resource pending; once the changes stop for ``DEBOUNCE`` seconds (or ``MAX_HOLD``
after the first), each pending resource passes the back-off (``Backoff``) and the
ready ones are handed to ``request()`` (the worker's trigger), read back with
``take_ready()``. Package database changes mark the package resources; every
``service_poll`` seconds the service resources are marked.

Running out of watches (ENOSPC) is said once, with the number watched and the sysctl,
and the rest is left to the schedule: watching never fails an apply.
"""
from __future__ import annotations

import errno
import os
import select
import threading
import time

from ccm.agent.watch import inotify, targets
from ccm.agent.watch.backoff import Backoff
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Callable, Dict, List, Optional, Set, Tuple

DEBOUNCE = 0.15
MAX_HOLD = 0.5
BATCH = 0.02       # seconds events gather before a read: a write loop costs 50 wake-ups a second, not one per write
RETRY_DELAY = 5.0   # seconds before a re-apply that could not run is tried again
PACKAGE_DBS = ("/var/lib/dpkg/status", "/var/lib/rpm/rpmdb.sqlite", "/var/lib/rpm/Packages",
               "/usr/lib/sysimage/rpm/rpmdb.sqlite")
PACKAGE_DB_ENV = "CCM_WATCH_PACKAGE_DB"   # tests: the package database files to watch instead
GONE = inotify.IN_DELETE_SELF | inotify.IN_MOVE_SELF | inotify.IN_IGNORED


def package_dbs() -> List[str]:
    override = os.environ.get(PACKAGE_DB_ENV)
    if override:
        return [p for p in override.split(os.pathsep) if os.path.isabs(p)]
    return list(PACKAGE_DBS)


class ManifestWatch:
    def __init__(self, *, log: Any, request: Callable[[], None], service_poll: float,
                 backoff: Optional[Backoff] = None):
        self.log = log
        self._request = request
        self.service_poll = service_poll
        self.backoff = backoff or Backoff()
        self._lock = threading.Lock()
        self._ino: Optional[inotify.Inotify] = None
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_w, False)
        os.set_inheritable(self._wake_r, False)
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None
        self._suspended = True
        self._targets: List[targets.Target] = []
        self._plan = targets.Plan([], [], [], set())
        self._index: Dict[str, Dict[str, Tuple[str, ...]]] = {}   # tuples: a set per path costs 4x
        self._wds: Dict[int, str] = {}
        self._pending: Dict[str, str] = {}    # ref -> the path that changed first
        self._first = self._last = 0.0
        self._deferred: Dict[str, float] = {}   # ref -> not before (backed off)
        self._deferred_path: Dict[str, str] = {}
        self._ready: Dict[str, str] = {}
        self._next_poll = 0.0
        self.paths = 0
        self.exhausted = False
        self.failed: Optional[str] = None

    # --- life cycle ---------------------------------------------------------------------

    def start(self) -> None:
        try:
            self._ino = inotify.Inotify()
        except OSError as exc:
            self.failed = str(exc)
            self.log.error("Cannot watch for drift, falling back to the scheduled interval", error=str(exc))
            return
        self._thread = threading.Thread(target=self._loop, name="ccm-watch", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        if self._stop.is_set():
            return
        self._stop.set()
        self._wake()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(2.0)
        with self._lock:
            if self._ino is not None:
                self._ino.close()
                self._ino = None
        for fd in (self._wake_r, self._wake_w):
            try:
                os.close(fd)
            except OSError:
                pass

    @property
    def active(self) -> bool:
        return self._ino is not None and not self._stop.is_set()

    # --- driven by the worker (scheduler thread) ---------------------------------------

    def suspend(self, refs: Optional[Set[str]] = None) -> None:
        """An apply of ``refs`` (None: all) starts: what they had pending it repairs."""
        with self._lock:
            self._suspended = True
            for ref in list(self._pending) if refs is None else [r for r in refs if r in self._pending]:
                del self._pending[ref]

    def resume(self) -> None:
        with self._lock:
            self._drain()
            self._suspended = False

    def arm(self, plan: targets.Plan, refs: Optional[Set[str]] = None) -> None:
        """Watch ``plan``'s paths; with ``refs`` (a subset apply) only theirs are replaced."""
        with self._lock:
            if self._ino is None:
                return
            self._drain()
            if refs is None:
                self._plan = plan
                self._forget_backoff()
            else:
                keep = [t for t in self._plan.targets if t.ref not in refs]
                self._plan = targets.Plan(keep + plan.targets, self._plan.packages, self._plan.services,
                                          (self._plan.noop_refs - refs) | plan.noop_refs)
            self._place()
            self._suspended = False
        self._wake()

    def keep(self) -> None:
        """After a full apply that managed the same paths as the one that placed the watches
        and changed none of them: what ``arm`` would do without placing them again (the
        apply's own events dropped, back-off forgotten, watching resumed)."""
        with self._lock:
            if self._ino is None:
                return
            self._drain()
            self._forget_backoff()
            self._suspended = False
        self._wake()

    def _forget_backoff(self) -> None:
        """A full apply ran every resource of the plan: their back-off starts again."""
        plan = self._plan
        self.backoff.forget({t.ref for t in plan.targets} | set(plan.packages) | set(plan.services))

    def _wake(self) -> None:
        try:
            os.write(self._wake_w, b"x")
        except OSError:   # closed by stop(), or full: the loop is awake anyway
            pass

    def take_ready(self) -> Dict[str, str]:
        with self._lock:
            ready, self._ready = self._ready, {}
            return ready

    def retry(self, ready: Dict[str, str], delay: float = RETRY_DELAY) -> None:
        """A re-apply that did not run (the run lock was held, the manifest did not load):
        try these again after ``delay`` seconds."""
        with self._lock:
            at = time.monotonic() + delay
            for ref, path in ready.items():
                self._deferred[ref] = at
                self._deferred_path[ref] = path
        self._wake()

    def repaired(self, ref: str) -> None:
        """A re-apply of ``ref`` found drift: it counts toward its back-off."""
        with self._lock:
            self.backoff.record(ref, time.monotonic())

    def is_noop(self, ref: str) -> bool:
        return ref in self._plan.noop_refs

    # --- watches -----------------------------------------------------------------------

    def _drain(self) -> None:
        if self._ino is not None:
            while self._ino.read():
                pass

    def _place(self) -> None:
        assert self._ino is not None
        index = targets.index(self._plan.targets)
        for db in package_dbs() if self._plan.packages else []:
            index.setdefault(os.path.dirname(db), {}).setdefault(os.path.basename(db), set()).add(PACKAGES)
        wanted: Dict[str, int] = {}
        current = {d: wd for wd, d in self._wds.items()}
        placed = 0
        for directory in index:
            try:
                wanted[directory] = self._ino.add_watch(directory)
                placed += 1
            except OSError as exc:
                if exc.errno == errno.ENOSPC:
                    self._exhausted(placed, len(index))
                    break
                self.log.debug("Not watching", path=directory, error=str(exc))
        for directory, wd in current.items():
            if wanted.get(directory) != wd:
                try:
                    self._ino.rm_watch(wd)
                except OSError:
                    pass
        self._wds = {wd: d for d, wd in wanted.items()}
        self._index = {d: {n: tuple(refs) for n, refs in index[d].items()} for d in wanted}
        self.paths = sum(1 for d in wanted for refs in index[d].values() if PACKAGES not in refs)

    def _exhausted(self, placed: int, needed: int) -> None:
        if self.exhausted:
            return
        self.exhausted = True
        self.log.error("Out of inotify watches, watching only part of the manifest for drift; the rest is "
                       "checked at the scheduled interval: raise the sysctl fs.inotify.max_user_watches",
                       watched=placed, needed=needed, max_user_watches=inotify.max_user_watches() or "unknown",
                       sysctl="fs.inotify.max_user_watches")

    # --- the thread ----------------------------------------------------------------------

    def _loop(self) -> None:
        while not self._stop.is_set():
            ino = self._ino
            if ino is None:
                return
            try:
                readable, _, _ = select.select([ino.fd, self._wake_r], [], [], self._timeout())
            except (OSError, ValueError):
                return
            if self._wake_r in readable:
                os.read(self._wake_r, 4096)
            if ino.fd in readable:
                self._stop.wait(BATCH)
            with self._lock:
                if self._ino is None:
                    return
                if ino.fd in readable:
                    self._read_all(ino)
                ready = self._settle(time.monotonic())
            if ready:
                self._request()

    def _timeout(self) -> float:
        now = time.monotonic()
        waits = [1.0]
        if self._pending:
            waits.append(min(self._last + DEBOUNCE, self._first + MAX_HOLD) - now)
        if self._deferred:
            waits.append(min(self._deferred.values()) - now)
        if self._plan.services:
            waits.append(self._next_poll - now)
        return max(0.01, min(waits))

    def _read_all(self, ino: inotify.Inotify, limit: int = 16) -> None:
        for _ in range(limit):   # 16 reads of 64 KiB: more than the kernel's default queue of 16,384 events
            events = ino.read()
            if not events:
                return
            self._dispatch(events)

    def _dispatch(self, events: List[Any]) -> None:
        if self._suspended or not events:
            return
        now = time.monotonic()
        for wd, mask, name in events:
            if mask & inotify.IN_Q_OVERFLOW:   # events were lost: everything may have changed
                for directory in self._index:
                    self._hits(directory, "", True, now)
                continue
            watched = self._wds.get(wd)
            if watched is not None:
                self._hits(watched, name, bool(mask & GONE), now)

    def _hits(self, directory: str, name: str, every: bool, now: float) -> None:
        entries = self._index.get(directory, {})
        if every:
            hits = dict(entries)
        else:
            hits = {n: entries[n] for n in (name, targets.INSIDE) if n in entries}
        for entry, refs in hits.items():
            self._mark(refs, os.path.join(directory, entry or name), now)

    def _mark(self, refs: Tuple[str, ...], path: str, now: float) -> None:
        for ref in self._plan.packages if PACKAGES in refs else []:
            self._pending.setdefault(ref, path)
        for ref in refs:
            if ref != PACKAGES:
                self._pending.setdefault(ref, path)
        if not self._first:
            self._first = now
        self._last = now

    def _settle(self, now: float) -> bool:
        """Move debounced, admitted refs to ready; True when some are."""
        if self._plan.services and now >= self._next_poll:
            if self._next_poll and not self._suspended:
                for ref in self._plan.services:
                    self._pending.setdefault(ref, "")
                self._last = self._first = now - DEBOUNCE
            self._next_poll = now + self.service_poll
        for ref in [r for r, t in self._deferred.items() if now >= t]:
            del self._deferred[ref]
            self._pending.setdefault(ref, self._deferred_path.pop(ref, ""))
        if not self._pending or self._suspended:
            return False
        if now - self._last < DEBOUNCE and now - self._first < MAX_HOLD:
            return False
        pending, self._pending = self._pending, {}
        self._first = self._last = 0.0
        for ref, path in pending.items():
            ok, not_before, step = self.backoff.admit(ref, now)
            if ok:
                self._ready[ref] = path
                continue
            self._deferred[ref], self._deferred_path[ref] = not_before, path
            if step is not None:
                self.log.warn("Drift repairs backed off: the resource keeps drifting", resource=ref, path=path,
                              step=step, retry_in=f"{not_before - now:.0f}s")
        return bool(self._ready)


PACKAGES = "\0packages"   # the package database's marker in the index (never a resource ref)
