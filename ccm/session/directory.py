"""Directory session store: one JSON file per event, no shared index to corrupt.

File names are ``<ordering>-<event_id>.event`` where ``<ordering>`` is a zero-padded
nanosecond clock made strictly increasing within a process, so replay order is exact even
for several events in one second (upstream orders by KSUID, which is second-accurate).
Plain ``<event_id>.event`` files written by upstream are read too and ordered by their
timestamp. Each file is written atomically (temp file, fsync, rename).
"""
from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
import threading
import time
from typing import List, Tuple

from ccm.log import internal
from ccm.model.errors import SessionError
from ccm.model.events import (EVENT_PROTOCOL, SESSION_START_PROTOCOL, SessionStartEvent,
                              SessionSummary, TransactionEvent, is_ksuid)
from ccm.session import Event, SessionStore

log = internal("ccm.session")
_NAME = re.compile(r"^(?:(\d{19,20})-)?([0-9A-Za-z]{27})\.event$")

# Process-wide on purpose: event files of every store (and every agent worker) must
# sort in the order they were written, so the clock is shared and locked.
_order_lock = threading.Lock()
_last_order = 0


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

    def start_session(self, manifest: str = "") -> SessionStartEvent:
        os.makedirs(self.directory, mode=0o755, exist_ok=True)
        start = SessionStartEvent()
        with self._lock:
            self._append(start)
        return start

    def _append(self, event: Event) -> None:
        if not is_ksuid(event.event_id):
            raise SessionError(f"invalid event ID: {event.event_id!r}")
        if not os.path.isdir(self.directory):
            raise SessionError(f"session store {self.directory} does not exist")
        name = f"{_next_order():020d}-{event.event_id}.event"
        data = json.dumps(event.to_dict(), indent=2, ensure_ascii=False).encode("utf-8")
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".part", dir=self.directory)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
            os.chmod(tmp, 0o644)
            os.rename(tmp, os.path.join(self.directory, name))
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise

    def all_events(self) -> List[Event]:
        try:
            names = os.listdir(self.directory)
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise SessionError(f"cannot read session store {self.directory}: {exc}") from exc
        loaded: List[Tuple[int, str, Event]] = []
        for name in names:
            if not name.endswith(".event"):
                continue
            path = os.path.join(self.directory, name)
            if not os.path.isfile(path) or os.path.islink(path):
                continue
            m = _NAME.match(name)
            try:
                with open(path, "rb") as fh:
                    doc = json.loads(fh.read().decode("utf-8"))
                if not isinstance(doc, dict):
                    raise ValueError("not a JSON object")
            except (OSError, ValueError) as exc:
                log.warning("Skipping unreadable session event", extra={"kv": {"file": path, "error": str(exc)}})
                continue
            protocol = doc.get("protocol")
            if protocol == EVENT_PROTOCOL:
                event: Event = TransactionEvent.from_dict(doc)
            elif protocol == SESSION_START_PROTOCOL:
                event = SessionStartEvent.from_dict(doc)
            else:
                log.warning("Skipping session event with unknown protocol", extra={"kv": {"file": path, "protocol": str(protocol)}})
                continue
            order = int(m.group(1)) if (m and m.group(1)) else event.timestamp_ns
            loaded.append((order, event.event_id, event))
        loaded.sort(key=lambda t: (t[0], t[1]))
        return [e for _, _, e in loaded]

    def stop(self, destroy: bool = False) -> SessionSummary:
        summary = self.summary()
        if destroy:
            shutil.rmtree(self.directory, ignore_errors=True)
        return summary
