"""Session stores: the record of a run, which drives ``require`` and ``subscribe``.

* ``MemoryStore``: the default, an ordered in-process list.
* ``DirectoryStore``: one JSON file per event (``CCM_SESSION_STORE``, shell sessions).

Both notify ``listeners`` (metrics) before storing, and answer "last event for
type#name-or-alias" queries through an index (``require``/``subscribe`` ask once per
resource; scanning every earlier event made a long require chain quadratic).
"""
from __future__ import annotations

from _thread import RLock   # threading.RLock's C implementation, without importing threading

from ccm.clock import new_ksuid, now_ns
from ccm.model.errors import SessionError
from ccm.model.events import EventRecord, SessionStartEvent, SessionSummary, TransactionEvent
from ccm.model.resource import parse_ref
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Callable, Dict, List, Optional, Sequence, Union

    from ccm.model.events import RecordedEvent

    Recorded = RecordedEvent
    Event = Union[TransactionEvent, EventRecord, SessionStartEvent]


def file_under_refs(last: Dict[str, Recorded], event: Recorded) -> None:
    """File ``event`` in ``last`` under the references that name it, ``type#name`` and
    ``type#alias`` (a reference has exactly one "#": a name holding one is filed under
    none; type names never hold one). Both stores' indexes are keyed so."""
    type_name, name, alias = event.type, event.name, event.alias
    if "#" not in name:
        last[f"{type_name}#{name}"] = event
    if alias and alias != name and "#" not in alias:
        last[f"{type_name}#{alias}"] = event


class SessionStore:
    def __init__(self) -> None:
        self.listeners: List[Callable[[TransactionEvent], None]] = []
        self._lock = RLock()
        # False: keep an ``EventRecord`` (flags, counters, errors) of each recorded event
        # instead of the event itself, for runs where nothing serialises recorded events
        # (``ccm apply`` without ``--json``): a large manifest's events hold its content.
        self.keep_events = True

    # storage primitives, implemented by subclasses
    def _append(self, event: Event, kept: Event) -> Event:
        """Store ``event``, keeping ``kept`` of it in memory (``record`` decides: the event
        or its ``EventRecord``); returns ``kept``."""
        raise NotImplementedError

    def all_events(self) -> List[Event]:
        raise NotImplementedError

    def start_session(self, manifest: str = "") -> SessionStartEvent:
        raise NotImplementedError

    def stop(self, destroy: bool = False) -> SessionSummary:
        raise NotImplementedError

    # shared behaviour
    def record(self, event: TransactionEvent) -> Event:
        """Store ``event`` (listeners see it first); returns what the store kept of it."""
        if not event.type or not event.name:
            raise SessionError("cannot record an event without a type and name")
        if self.listeners:
            for listener in self.listeners:
                try:
                    listener(event)
                except Exception:  # metrics must never break a run
                    pass
        # what this store keeps in memory of the event
        kept = event if self.keep_events or not isinstance(event, TransactionEvent) else event.record()
        lock = self._lock
        lock.acquire()   # what "with self._lock" does, for half the cost (once per resource)
        try:
            return self._append(event, kept)
        finally:
            lock.release()

    def transaction_events(self) -> List[Recorded]:
        return [e for e in self.all_events() if not isinstance(e, SessionStartEvent)]

    def events_for(self, type_name: str, name: str) -> List[Recorded]:
        return [e for e in self.transaction_events()
                if e.type == type_name and (e.name == name or (e.alias and e.alias == name))]

    def _last_for(self, type_name: str, name: str) -> Optional[Recorded]:
        """The newest event ``type#name`` finds; stores with an index answer from it."""
        events = self.events_for(type_name, name)
        return events[-1] if events else None

    def last_event(self, ref: str) -> Recorded:
        t, n = parse_ref(ref)
        event = self._last_for(t, n)
        if event is None:
            raise SessionError(f"no events found for {t}#{n}")
        return event

    def is_failed(self, ref: str) -> bool:
        ev = self.last_event(ref)
        return ev.failed or bool(ev.unmet_requirements)

    def failed_refs(self, refs: Sequence[str]) -> List[str]:
        """The ``refs`` that are ``is_failed``, in order (the ``require`` gate)."""
        return [ref for ref in refs if self.is_failed(ref)]

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
        # The newest event under each reference that names it (file_under_refs). Built by
        # the first lookup, then kept up to date: a run whose resources never require or
        # subscribe never builds it.
        self._last: Optional[Dict[str, Recorded]] = None

    def _append(self, event: Event, kept: Event) -> Event:
        self._events.append(kept)
        last = self._last
        if last is not None and not isinstance(kept, SessionStartEvent):
            name = kept.name   # file_under_refs inlined for the common case: once per resource of a require chain
            if not kept.alias and "#" not in name:
                last[f"{kept.type}#{name}"] = kept
            else:
                file_under_refs(last, kept)
        return kept

    def _build_index(self) -> Dict[str, Recorded]:
        """The first lookup of this session: index what it recorded so far."""
        with self._lock:
            last = self._last
            if last is None:
                last = {}
                for recorded in self._events:
                    if not isinstance(recorded, SessionStartEvent):
                        file_under_refs(last, recorded)
                self._last = last
            return last

    def _last_for(self, type_name: str, name: str) -> Optional[Recorded]:
        last = self._last
        if last is None:
            last = self._build_index()
        return last.get(f"{type_name}#{name}")

    def is_failed(self, ref: str) -> bool:
        return bool(self.failed_refs((ref,)))

    def failed_refs(self, refs: Sequence[str]) -> List[str]:
        # last_event(ref) without its calls for each ref the index holds (every resource
        # of a require chain asks); anything else takes SessionStore's way (and its errors)
        last = self._last
        if last is None:
            last = self._build_index()
        failed = []
        for ref in refs:
            try:
                ev = last.get(ref)
            except TypeError:   # not a string (validation admits none): SessionStore's error
                ev = None
            if ev is None:
                if SessionStore.is_failed(self, ref):   # a malformed ref or none recorded: its error
                    failed.append(ref)
            elif ev.failed or ev.unmet_requirements:
                failed.append(ref)
        return failed

    def all_events(self) -> List[Event]:
        with self._lock:
            return list(self._events)

    def start_session(self, manifest: str = "") -> SessionStartEvent:
        with self._lock:
            self._events, self._last = [], None
            start = SessionStartEvent(new_ksuid(), now_ns())
            self._events.append(start)
            return start

    def stop(self, destroy: bool = False) -> SessionSummary:
        summary = self.summary()
        if destroy:
            with self._lock:
                self._events, self._last = [], None
        return summary


def open_store(directory: Optional[str]) -> SessionStore:
    if directory:
        from ccm.session.directory import DirectoryStore

        return DirectoryStore(directory)
    return MemoryStore()
