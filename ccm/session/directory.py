"""Directory session store: one JSON file per event, no shared index to corrupt.

File names are ``<ordering>-<event_id>.event`` where ``<ordering>`` is a zero-padded
nanosecond clock made strictly increasing within a process, so replay order is exact even
for several events in one second (upstream orders by KSUID, which is second-accurate).
Plain ``<event_id>.event`` files written by upstream are read too and ordered by their
timestamp. Each file is written atomically (temp file, fsync, rename).

Safety on shared hosts: the store is created 0700 and event files are 0600 (events carry
file content); a store that is a symlink, belongs to another non-root user or is writable
by group or others is refused (``check_store``), so a planted path cannot make root write
into or read from its target; an event file is read only when it is a regular file (opened
without following a link) owned by us or by root: an event another user slipped in is
ignored (one warning), so it can neither trigger a ``subscribe`` nor count in a summary;
destroying a store removes only our own event files, never following a link.
"""
from __future__ import annotations

import errno
import json
import os
import re
import stat
import threading
import time

from ccm.clock import is_ksuid, new_ksuid, now_ns
from ccm.log import internal
from ccm.model.errors import SessionError
from ccm.model.events import (EVENT_PROTOCOL, SESSION_START_PROTOCOL, EventRecord, SessionStartEvent, SessionSummary,
                              TransactionEvent)
from ccm.session import SessionStore, file_under_refs
from ccm.session.watch import IN_CREATE, IN_MOVED_TO, DirWatch
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Dict, List, Optional, Set, Tuple

    from ccm.session import Event, Recorded

    Loaded = Tuple[int, str, Event]

log = internal("ccm.session")
_NAME = re.compile(r"^(?:(\d{19,20})-)?([0-9A-Za-z]{27})\.event$")

# Process-wide on purpose: event files of every store (and every agent worker) must
# sort in the order they were written, so the clock is shared and locked.
_order_lock = threading.Lock()
_last_order = 0
STORE_MODE = 0o700
EVENT_MODE = 0o600


def _trusted_owners() -> Tuple[int, ...]:
    """Whose event files a store reads: ours, and root's (root trusts only itself)."""
    return (os.geteuid(), 0)


def check_store(directory: str, *, must_exist: bool = False) -> bool:
    """True when ``directory`` exists and is safe to use; raise ``SessionError`` when it is not."""
    try:
        st = os.lstat(directory)
    except FileNotFoundError:
        if must_exist:
            raise SessionError(f"session store {directory} does not exist") from None
        return False
    if stat.S_ISLNK(st.st_mode):
        raise SessionError(f"session store {directory} is a symlink; refusing to use it")
    if not stat.S_ISDIR(st.st_mode):
        raise SessionError(f"session store {directory} is not a directory")
    me = os.geteuid()
    if st.st_uid not in (me, 0):
        raise SessionError(f"session store {directory} belongs to uid {st.st_uid}, not to us; refusing to use it")
    if st.st_mode & 0o022:
        # anyone who can create files in it could add events that drive require/subscribe
        raise SessionError(f"session store {directory} is writable by group or others "
                           f"(mode {stat.S_IMODE(st.st_mode):04o}); refusing to use it")
    return True


def _next_order() -> int:
    global _last_order
    with _order_lock:
        now = time.time_ns()
        if now <= _last_order:
            now = _last_order + 1
        _last_order = now
        return now


class DirectoryStore(SessionStore):
    def __init__(self, directory: str):
        super().__init__()
        if not directory or not directory.strip():
            raise SessionError("session store should not be empty")
        self.directory = os.path.abspath(os.path.normpath(directory))
        check_store(self.directory)   # an unsafe store is refused before anything is read from it
        self._known: Dict[str, Loaded] = {}  # file name -> parsed (unreadable ones: retried)
        self._seen: Set[str] = set()  # names of the listing already accounted for
        self._last: Dict[str, Recorded] = {}   # file_under_refs
        self._newest: Tuple[int, str] = (-1, "")
        self._watch: Optional[DirWatch] = None   # changes since the last listing (Linux)
        self._unreadable = False   # the last listing left event files to retry
        self._ignored: Set[str] = set()   # event files of another user: never read

    def start_session(self, manifest: str = "") -> SessionStartEvent:
        if not check_store(self.directory):
            parent = os.path.dirname(self.directory)
            if parent and not os.path.isdir(parent):
                os.makedirs(parent, mode=0o755, exist_ok=True)
            try:
                os.mkdir(self.directory, STORE_MODE)
            except FileExistsError:
                pass
            check_store(self.directory, must_exist=True)
        self._sweep()
        start = SessionStartEvent(new_ksuid(), now_ns())
        with self._lock:
            self._append(start, start)
        return start

    def _append(self, event: Event, kept: Event) -> Event:
        if not is_ksuid(event.event_id):
            raise SessionError(f"invalid event ID: {event.event_id!r}")
        check_store(self.directory, must_exist=True)
        name = f"{_next_order():020d}-{event.event_id}.event"
        from ccm import fsafe
        from ccm.redact import scrub_text

        if isinstance(event, EventRecord):
            raise TypeError("a session store writes whole events, not EventRecords")
        data = scrub_text(json.dumps(event.to_dict(), indent=2, ensure_ascii=False)).encode("utf-8")

        try:
            with fsafe.atomic_replace(os.path.join(self.directory, name), mode=EVENT_MODE) as fh:
                fh.write(data)
        except OSError as exc:
            raise SessionError(f"cannot write to session store {self.directory}: {exc.strerror or exc}") from None
        self._remember(name, kept)
        return kept

    def _sweep(self) -> None:
        from ccm import fsafe

        try:
            fd = fsafe.open_dir(self.directory)
        except OSError:
            return
        try:
            fsafe.sweep_stale(fd)
        finally:
            os.close(fd)

    def _listing(self) -> List[str]:
        if not check_store(self.directory):
            return []
        try:
            names = os.listdir(self.directory)
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise SessionError(f"cannot read session store {self.directory}: {exc}") from exc
        return [n for n in names if n.endswith(".event")]

    def _read_event_file(self, name: str) -> Optional[bytes]:
        """The bytes of event file ``name``, or None: not a regular file (a symlink is not
        followed), or owned by neither us nor root (ignored for good, warned about once)."""
        path = os.path.join(self.directory, name)
        if name in self._ignored:
            return None
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError as exc:
            if exc.errno in (errno.ENOENT, errno.ELOOP):
                return None   # gone, or a symlink: not an event
            raise   # unreadable: warned about by the caller, tried again
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                return None
            if st.st_uid not in _trusted_owners():
                self._ignored.add(name)
                log.warning("Ignoring session event owned by another user",
                            extra={"kv": {"file": path, "uid": st.st_uid}})
                return None
            with os.fdopen(fd, "rb") as fh:
                fd = -1
                return fh.read()
        finally:
            if fd >= 0:
                os.close(fd)

    def _load(self, name: str) -> Optional[Loaded]:
        """(order, event id, event) of one file, or None (not a regular file, not ours,
        unreadable)."""
        path = os.path.join(self.directory, name)
        m = _NAME.match(name)
        try:
            raw = self._read_event_file(name)
            if raw is None:
                return None
            doc = json.loads(raw.decode("utf-8"))
            if not isinstance(doc, dict):
                raise ValueError("not a JSON object")
        except (OSError, ValueError) as exc:
            log.warning("Skipping unreadable session event", extra={"kv": {"file": path, "error": str(exc)}})
            return None
        protocol = doc.get("protocol")
        if protocol == EVENT_PROTOCOL:
            event: Event = TransactionEvent.from_dict(doc)
        elif protocol == SESSION_START_PROTOCOL:
            event = SessionStartEvent.from_dict(doc)
        else:
            log.warning("Skipping session event with unknown protocol",
                        extra={"kv": {"file": path, "protocol": str(protocol)}})
            return None
        order = int(m.group(1)) if (m and m.group(1)) else event.timestamp_ns
        return (order, event.event_id, event)

    def _remember(self, name: str, event: Event) -> None:
        """Index an event this process just wrote without reading its file back."""
        order = int(name.split("-", 1)[0])
        item: Loaded = (order, event.event_id, event)
        if name in self._known:
            return
        self._known[name] = item
        self._seen.add(name)
        if (order, event.event_id) > self._newest:
            self._index_add(item)
        else:
            self._rebuild_index()

    def all_events(self) -> List[Event]:
        loaded = [item for item in map(self._load, self._listing()) if item is not None]
        loaded.sort(key=lambda t: (t[0], t[1]))
        return [e for _, _, e in loaded]

    # The lookup index. Event files are immutable once renamed into place (unique names,
    # written once), so each is parsed at most once. A lookup lists the directory again
    # unless the inotify watch shows that only this store's own writes happened since the
    # last listing, so events other processes add or delete are seen exactly as before.
    def _only_our_writes(self) -> bool:
        """True when, since the last listing, the directory only gained the event files
        this store wrote (or changed entries that are not events): listing it again would
        change nothing. Without a working watch (or with files to retry): False."""
        if self._watch is None or self._unreadable:
            return False
        changes = self._watch.changes()
        if changes is None:
            self._watch = None
            return False
        for mask, name in changes:
            if not name.endswith(".event"):
                continue   # temp files and strangers: never events
            if mask & (IN_CREATE | IN_MOVED_TO):
                if name not in self._known:
                    return False
            elif name in self._seen:   # removed or renamed away
                return False
        return True

    def _sync_index(self) -> None:
        if self._only_our_writes():
            return
        check_store(self.directory)   # a store that became unsafe is refused, not read (missing: empty)
        if self._watch is None:   # watch first, then list: no change falls in between
            self._watch = DirWatch.open(self.directory)
        try:
            names = set(os.listdir(self.directory))
        except FileNotFoundError:
            names = set()
        except OSError as exc:
            raise SessionError(f"cannot read session store {self.directory}: {exc}") from exc
        self._unreadable = False
        if names == self._seen:  # the common case: nothing but our own writes since last time
            return
        rebuild = False
        for name in self._seen - names:
            self._seen.discard(name)
            rebuild = self._known.pop(name, None) is not None or rebuild
        added = []
        for name in names - self._seen:
            if not name.endswith(".event"):
                self._seen.add(name)  # temp files and strangers: never events
                continue
            item = self._load(name)  # None (warned about): tried again next time, as before
            if item is not None:
                self._known[name] = item
                self._seen.add(name)
                added.append(item)
            elif name in self._ignored:
                self._seen.add(name)   # another user's: not retried
            else:
                self._unreadable = True
        added.sort(key=lambda t: (t[0], t[1]))
        if rebuild or (added and (added[0][0], added[0][1]) < self._newest):
            self._rebuild_index()  # not a plain append: replay everything in order
        else:
            for item in added:
                self._index_add(item)

    def _rebuild_index(self) -> None:
        self._last = {}
        self._newest = (-1, "")
        items = sorted(self._known.values(), key=lambda t: (t[0], t[1]))
        for item in items:
            self._index_add(item)

    def _index_add(self, item: Loaded) -> None:
        order, event_id, event = item
        if not isinstance(event, SessionStartEvent):
            file_under_refs(self._last, event)
        self._newest = max(self._newest, (order, event_id))

    def _last_for(self, type_name: str, name: str) -> Optional[Recorded]:
        with self._lock:
            self._sync_index()
            return self._last.get(f"{type_name}#{name}")

    def stop(self, destroy: bool = False) -> SessionSummary:
        summary = self.summary()
        if destroy:
            self.destroy()
        return summary

    def destroy(self) -> None:
        """Remove our event files (regular files we own, named like events), then the directory.

        Works through a descriptor opened with ``O_NOFOLLOW``: a symlinked store is refused
        and nothing but event files is ever unlinked; a directory holding anything else stays.
        """
        check_store(self.directory, must_exist=True)
        flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW
        try:
            fd = os.open(self.directory, flags)
        except OSError as exc:
            raise SessionError(f"cannot open session store {self.directory}: {exc.strerror or exc}") from None
        me = os.geteuid()
        try:
            for name in os.listdir(fd):
                if not _NAME.match(name):
                    continue
                try:
                    st = os.lstat(name, dir_fd=fd)
                    if stat.S_ISREG(st.st_mode) and st.st_uid == me:
                        os.unlink(name, dir_fd=fd)
                except OSError:
                    continue
        finally:
            os.close(fd)
        try:
            os.rmdir(self.directory)
        except OSError:
            pass  # something that is not ours is left in it
