"""Publishing ``register_when_stable`` entries: the gate, the two NATS publishers and the
run publisher (``RegistrationPublisher``) that hears every event of a run.

``nats``: core publish (flushed, no acknowledgement). ``jetstream``: acknowledged
publish with ``Nats-Rollup: sub``, ``Nats-TTL`` when the entry has a TTL and
``Nats-Expected-Stream`` when a stream name is configured; retried through elections.
Same subjects and bodies as upstream, so Go and Python nodes see each other's entries.
An entry holding a value marked ``# @sensitive`` is refused (``refuse_sensitive``).
"""
from __future__ import annotations

import time

from ccm.model.errors import ValidationError
from ccm.model.events import TransactionEvent
from ccm.model.resource import Properties
from ccm.model.run import Publisher as RunPublisher
from ccm.model.run import Run
from ccm.nats import NatsError
from ccm.nats.connection import Connection
from ccm.registration.entry import Entry, from_mapping, ttl_text
from ccm.registration.subjects import publish_subject
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional

KINDS = ("nats", "jetstream")
OK = 0


def headers_for(entry: Entry, stream: Optional[str]) -> Dict[str, str]:
    headers = {"Nats-Rollup": "sub"}
    ttl = ttl_text(entry.ttl_ns)
    if ttl is not None:
        headers["Nats-TTL"] = ttl
    if stream:
        headers["Nats-Expected-Stream"] = stream
    return headers


def refuse_sensitive(entry: Entry) -> None:
    """A value marked ``# @sensitive`` never leaves the host: not in a body, not in a subject.

    Replacing it by ``REDACTED`` would publish a wrong entry for every peer to read, so the
    entry is refused, naming the field (never the value).
    """
    from ccm import redact

    fields = [(k, v) for k, v in entry.as_dict().items() if isinstance(v, str)]
    fields += [(f"annotation {k!r}", k) for k in entry.annotations]
    fields += [(f"annotation {k!r}", v) for k, v in entry.annotations.items()]
    for label, text in fields:
        if redact.holds_known(text):
            raise ValidationError(f"registration not published: {label} holds a value marked @sensitive")


class Publisher:
    def __init__(self, conn: Connection, kind: str, stream: Optional[str] = None):
        if kind not in KINDS:
            raise NatsError(f"unknown registration publisher {kind!r} (expected nats or jetstream)")
        self.conn = conn
        self.kind = kind
        self.stream = stream

    def publish(self, entry: Entry) -> str:
        refuse_sensitive(entry)
        subject = publish_subject(entry)
        body = entry.to_json()
        if self.kind == "nats":
            async def core(nc: Any) -> None:
                await nc.publish(subject, body)
                await nc.flush(timeout=2)
                # a second round trip before judging: in loaded test runs the server's
                # refusal was, now and then, not yet recorded after the first one
                await nc.flush(timeout=2)

            try:
                started = time.monotonic()
                self.conn.run(core, 3.0, "could not publish registration")
                # the server drops a publish it refuses and says so before the flush's PONG
                self.conn.raise_if_denied("could not publish registration", started)
            except NatsError:
                raise
            except Exception as exc:
                from ccm.nats.connection import describe

                raise NatsError(f"could not publish registration: {describe(exc)}") from None
            return subject
        headers = headers_for(entry, self.stream)

        async def reliable(js: Any) -> Any:
            return await js.publish(subject, body, headers=headers)

        self.conn.jetstream(reliable, "could not publish registration")
        return subject


def gate_open(run: Run, event: TransactionEvent) -> bool:
    """Upstream's gate (not noop, not failed, every check OK), and not skipped."""
    if run.noop or event.noop or event.failed or event.skipped:
        return False
    return all(r.status == OK for r in (event.health_checks or []))


def entries_of(props: Properties) -> List[Entry]:
    return [from_mapping(item) for item in (props.get("register_when_stable") or [])]


def publish_event(run: Run, publisher: Publisher, event: TransactionEvent, props: Properties) -> int:
    """Publish the entries of one resource's event if the gate allows; returns the count.

    A failure fails the resource's event (before it is logged and recorded), never the run.
    """
    raw = props.get("register_when_stable")
    if not raw or not gate_open(run, event):
        return 0
    count = 0
    for item in raw:
        try:
            entry = from_mapping(item)
            subject = publisher.publish(entry)
        except (ValidationError, NatsError) as exc:
            run.log.error("Could not publish registration", resource=event.label, error=str(exc))
            event.fail(f"registration: {exc}")
            return count
        count += 1
        run.log.debug("Published registration", subject=subject, publisher=publisher.kind)
    return count


class RegistrationPublisher(RunPublisher):
    """The run publisher (``ccm.model.run.Publisher``) that publishes each resource's
    ``register_when_stable`` entries through ``sender`` (``publish_event``)."""

    hears_events = True

    def __init__(self, sender: Publisher) -> None:
        self.sender = sender

    def event(self, run: Run, event: TransactionEvent, props: Properties) -> None:
        publish_event(run, self.sender, event, props)


def publisher_for(manager: Any, kind: str, stream: Optional[str] = None) -> RegistrationPublisher:
    """The publisher of a run whose entries go out over ``manager``'s NATS connection
    (``ccm apply --publish-registrations``: ``Manager.execute(publisher=...)``)."""
    return RegistrationPublisher(Publisher(manager.nats_connection(), kind, stream))


def enable(manager: Any, kind: str, stream: Optional[str] = None) -> Publisher:
    """Make every later run of ``manager`` (and of its children) publish its entries (the
    agent's set-up, ``Manager.add_publisher``); returns the NATS publisher."""
    publisher = publisher_for(manager, kind, stream)
    manager.add_publisher(publisher)
    return publisher.sender
