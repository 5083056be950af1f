"""The events the apply flow makes (``new_event``), and the plain twin they must equal.

What: ``LazyEvent`` is the ``TransactionEvent`` of one resource run as the flow makes it
(``LazyEvent.begin``): its id is drawn when it is made (``ccm.clock.draw_ksuid``: the time,
also its timestamp, and 16 random bytes) and encoded on first read; its ``properties`` are
the resource's ``Properties.to_dict()``, made on first read (``properties_from`` keeps the
source); its ``record()`` is a ``LazyRecord`` that shares the drawn id. A plain ``ccm apply``
prints no JSON and keeps only records, so it encodes no id and builds no properties (about
22,000 and 14,000 instructions a resource: issue 16). The fields the flow does not set on
every resource are class attributes holding ``TransactionEvent``'s defaults, not stored.

``plain_event`` is the reference: a ``TransactionEvent`` stamped when it is made whose
``properties_from`` builds the dict at once. ``CCM_LAZY_EVENTS=0`` makes the flow use it
(``new_event``, chosen when this module is imported); ``tests/engine/test_flow_events.py``
runs the same manifests both ways and compares what is serialised, logged and counted.

Guarantees: a lazy event serialises, compares field by field and counts as its plain
twin; encoding is deterministic, so an event and its record, or two threads reading at
once, see the same id. A properties source must not change after ``properties_from`` (the
flow hands it on only to readers). Not: equal (``==``) to a plain event: value classes
compare only with their own class.
"""
from __future__ import annotations

import os

from ccm.clock import ksuid_text, new_ksuid, now_ns, pooled_random16, random16
from ccm.model.events import EVENT_PROTOCOL, EventRecord, ResourceState, TransactionEvent
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Callable, Dict, Optional

    from ccm.clock import Drawn
    from ccm.model.events import PropertySource

_new_object = object.__new__


class _DrawnId:
    """``event_id``: the KSUID of ``_drawn``, encoded on first read."""

    __slots__ = ()
    _event_id: Optional[str]
    _drawn: Drawn

    @property
    def event_id(self) -> str:
        eid = self._event_id
        if eid is None:
            eid = ksuid_text(self._drawn)
            object.__setattr__(self, "_event_id", eid)   # a slot or __dict__ of the subclass
        return eid

    @event_id.setter
    def event_id(self, value: str) -> None:
        object.__setattr__(self, "_event_id", value)


class LazyEvent(_DrawnId, TransactionEvent):
    # TransactionEvent's defaults of what begin() leaves unset (most resources never set them)
    provider = final_ensure = noop_message = ""
    duration_ns = 0
    status: Optional[ResourceState] = None
    health_check_only = changed = refreshed = noop = False
    protocol = EVENT_PROTOCOL
    _properties: Optional[Dict[str, Any]]
    _properties_of: Optional[PropertySource] = None

    @classmethod
    def begin(cls, type: str, name: str, alias: str, requested_ensure: str,
              health_check_only: bool) -> TransactionEvent:
        """``plain_event(...)``, as the flow makes one per resource: no ``__init__`` call."""
        event: LazyEvent = _new_object(cls)
        event._properties = None
        # stored although they equal TransactionEvent's defaults: read several times per resource
        event.failed = event.skipped = False
        event._event_id = None
        event.type = type
        event.name = name
        event.alias = alias
        event.requested_ensure = requested_ensure
        if health_check_only:
            event.health_check_only = health_check_only
        event.health_checks = []
        event.errors = []
        event.unmet_requirements = []
        try:   # ccm.clock.draw_ksuid(), without its call while the random pool lasts
            chunk = pooled_random16()
        except IndexError:
            chunk = random16()
        event.timestamp_ns = ns = now_ns()
        event._drawn = (ns, chunk)
        return event

    @property   # TransactionEvent's attribute, made on first read
    def properties(self) -> Dict[str, Any]:
        props = self._properties
        if props is None:   # the source stays: two threads reading at once make equal dicts
            source = self._properties_of
            props = self._properties = {} if source is None else source.to_dict()
        return props

    @properties.setter
    def properties(self, value: Dict[str, Any]) -> None:
        self._properties = value
        self._properties_of = None

    def properties_from(self, source: PropertySource) -> None:
        self._properties = None
        self._properties_of = source

    def record(self) -> EventRecord:
        """A ``LazyRecord`` of this event (made here, without an ``__init__`` call: once per resource)."""
        kept: LazyRecord = _new_object(LazyRecord)
        kept._event_id = self._event_id
        kept._drawn = self._drawn
        kept._copy(self)
        return kept


class LazyRecord(_DrawnId, EventRecord):
    """An ``EventRecord`` of a ``LazyEvent`` (``LazyEvent.record``): the same id, encoded on
    first read."""

    __slots__ = ("_event_id", "_drawn")


def plain_event(type: str, name: str, alias: str, requested_ensure: str,
                health_check_only: bool) -> TransactionEvent:
    """The reference: a ``TransactionEvent`` stamped now."""
    return TransactionEvent(type=type, name=name, alias=alias, requested_ensure=requested_ensure,
                            health_check_only=health_check_only, event_id=new_ksuid(), timestamp_ns=now_ns())


LAZY = os.environ.get("CCM_LAZY_EVENTS", "").strip() != "0"
new_event: Callable[[str, str, str, str, bool], TransactionEvent] = LazyEvent.begin if LAZY else plain_event
