"""Session stores: the record of a run, which drives ``require`` and ``subscribe``.

* ``MemoryStore``: the default, an ordered in-process list.
* ``DirectoryStore``: one JSON file per event (``CCM_SESSION_STORE``, shell sessions).

Both notify ``listeners`` (metrics) before storing, and answer "last event for
type#name-or-alias" queries.
"""
from __future__ import annotations

import threading
from typing import Callable, List, Optional, Sequence, Union

from ccm.model.errors import SessionError
from ccm.model.events import SessionStartEvent, SessionSummary, TransactionEvent
from ccm.model.resource import parse_ref

Event = Union[TransactionEvent, SessionStartEvent]


class SessionStore:
    def __init__(self) -> None:
        self.listeners: List[Callable[[TransactionEvent], None]] = []
        self._lock = threading.RLock()

    # storage primitives, implemented by subclasses
    def _append(self, event: Event) -> None:
        raise NotImplementedError

    def all_events(self) -> List[Event]:
        raise NotImplementedError

    def start_session(self, manifest: str = "") -> SessionStartEvent:
        raise NotImplementedError

    def stop(self, destroy: bool = False) -> SessionSummary:
        raise NotImplementedError

    # shared behaviour
    def record(self, event: TransactionEvent) -> None:
        if not event.type or not event.name:
            raise SessionError("cannot record an event without a type and name")
        for listener in self.listeners:
            try:
                listener(event)
            except Exception:  # metrics must never break a run
                pass
        with self._lock:
            self._append(event)

    def transaction_events(self) -> List[TransactionEvent]:
        return [e for e in self.all_events() if isinstance(e, TransactionEvent)]

    def events_for(self, type_name: str, name: str) -> List[TransactionEvent]:
        return [e for e in self.transaction_events()
                if e.type == type_name and (e.name == name or (e.alias and e.alias == name))]

    def last_event(self, ref: str) -> TransactionEvent:
        t, n = parse_ref(ref)
        events = self.events_for(t, n)
        if not events:
            raise SessionError(f"no events found for {t}#{n}")
        return events[-1]

    def is_failed(self, ref: str) -> bool:
        ev = self.last_event(ref)
        return ev.failed or bool(ev.unmet_requirements)

    def should_refresh(self, refs: Sequence[str]) -> bool:
        for ref in refs:
            if self.last_event(ref).changed:
                return True
        return False

    def summary(self) -> SessionSummary:
        return SessionSummary.build(self.all_events())


class MemoryStore(SessionStore):
    def __init__(self) -> None:
        super().__init__()
        self._events: List[Event] = []

    def _append(self, event: Event) -> None:
        self._events.append(event)

    def all_events(self) -> List[Event]:
        with self._lock:
            return list(self._events)

    def start_session(self, manifest: str = "") -> SessionStartEvent:
        with self._lock:
            self._events = []
            start = SessionStartEvent()
            self._events.append(start)
            return start

    def stop(self, destroy: bool = False) -> SessionSummary:
        summary = self.summary()
        if destroy:
            with self._lock:
                self._events = []
        return summary


def open_store(directory: Optional[str]) -> SessionStore:
    if directory:
        from ccm.session.directory import DirectoryStore

        return DirectoryStore(directory)
    return MemoryStore()
