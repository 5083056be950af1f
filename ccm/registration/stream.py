"""The registration stream: init, lookup, watch, remove (over the manager's connection).

Lookup uses an ordered consumer with last-per-subject delivery (no 1024-subject ceiling
of batch Direct Get); it stops when the server reports nothing pending, drops delete
markers (``Nats-Marker-Reason``) and sorts as upstream. ``allow_direct`` is set on the
stream anyway so Go peers' Direct Get lookups work.
"""
from __future__ import annotations

import asyncio
import queue
import threading
from dataclasses import dataclass
from typing import Any, Iterator, List, Optional

from ccm.model.durations import parse_duration
from ccm.nats import NatsError
from ccm.nats.connection import Connection
from ccm.registration import STREAM_SUBJECTS
from ccm.registration.entry import Entry, from_json
from ccm.registration.filesd import Entries, sort_entries
from ccm.registration.subjects import entry_from_subject, filter_subject, publish_subject

MARKER = "Nats-Marker-Reason"
LOOKUP_IDLE = 5.0          # longest wait for the next message of a lookup
LOOKUP_TIMEOUT = 120.0


@dataclass
class StreamSettings:
    name: str
    subjects: List[str]
    replicas: int
    max_age: float


def init(conn: Connection, stream: str, *, replicas: int = 1, max_age: str = "1m") -> StreamSettings:
    if not 1 <= replicas <= 5:
        raise NatsError("replicas must be between 1 and 5")
    age = parse_duration(max_age)
    if age <= 0:
        raise NatsError("max age must be greater than 0")

    async def op(js: Any) -> Any:
        import nats.js.api as api
        import nats.js.errors as je

        cfg = api.StreamConfig(
            name=stream, subjects=list(STREAM_SUBJECTS), retention=api.RetentionPolicy.LIMITS,
            max_msgs_per_subject=1, allow_rollup_hdrs=True, allow_msg_ttl=True, max_age=age,
            subject_delete_marker_ttl=age, deny_delete=True, deny_purge=False, num_replicas=replicas,
            allow_direct=True)
        try:
            await js.stream_info(stream)
        except je.NotFoundError:
            return await js.add_stream(cfg)
        return await js.update_stream(cfg)

    info = conn.jetstream(op, f"could not create stream {stream}", attempt_timeout=12.0, api_timeout=5.0)
    cfg = info.config
    return StreamSettings(name=cfg.name, subjects=list(cfg.subjects or []), replicas=cfg.num_replicas or replicas,
                          max_age=age)


async def _ordered(js: Any, stream: str, subject: str, cb: Any = None) -> Any:
    import nats.js.api as api

    config = api.ConsumerConfig(filter_subjects=[subject], inactive_threshold=2.0)
    return await js.subscribe(subject, stream=stream, ordered_consumer=True, cb=cb, config=config,
                              deliver_policy=api.DeliverPolicy.LAST_PER_SUBJECT, idle_heartbeat=2.0)


def _is_marker(msg: Any) -> bool:
    headers = msg.headers
    return bool(headers) and bool(headers.get(MARKER))


def lookup(conn: Connection, stream: str, cluster: str = "*", protocol: str = "*", service: str = "*",
           address: str = "*") -> Entries:
    """The last entry of every matching subject, markers dropped, sorted."""
    if not stream:
        raise NatsError("could not query registrations: no registration stream name")
    subject = filter_subject(cluster, protocol, service, address)

    async def op(js: Any) -> List[bytes]:
        import nats.js.errors as je

        try:
            sub = await _ordered(js, stream, subject)
        except je.NotFoundError:
            raise NatsError(f"could not query registrations: stream {stream} not found") from None
        bodies: List[bytes] = []
        try:
            info = await sub.consumer_info()
            sent = info.delivered.consumer_seq if info.delivered is not None else 0
            if info.num_pending == 0 and not sent:
                return bodies   # nothing matched (and nothing is on its way)
            while True:
                msg = await sub.next_msg(timeout=LOOKUP_IDLE)
                if not _is_marker(msg):
                    bodies.append(msg.data)
                if msg.metadata.num_pending == 0:
                    return bodies
        finally:
            try:
                await sub.unsubscribe()
            except Exception:
                pass

    bodies = conn.jetstream(op, "could not query registrations", attempt_timeout=LOOKUP_TIMEOUT)
    entries: List[Entry] = []
    for body in bodies:
        try:
            entries.append(from_json(body))
        except ValueError as exc:
            raise NatsError(str(exc)) from None
    return Entries(sort_entries(entries))


def remove(conn: Connection, stream: str, entry: Entry) -> str:
    subject = publish_subject(entry)

    async def op(js: Any) -> bool:
        await js.purge_stream(stream, subject=subject)
        # The server writes no marker for a purge; leave one (rolled up, expiring) so that
        # watchers, ours and upstream's, see the removal. Lookups skip markers.
        await js.publish(subject, b"", headers={MARKER: "Purge", "Nats-Rollup": "sub", "Nats-TTL": "1m"})
        return True

    conn.jetstream(op, "could not remove registration")
    return subject


@dataclass
class WatchEvent:
    action: str            # "register" or "remove"
    entry: Entry
    reason: str = ""


def watch(conn: Connection, stream: str, cluster: str = "*", protocol: str = "*", service: str = "*",
          address: str = "*", stop: Optional[threading.Event] = None) -> Iterator[WatchEvent]:
    """Current state, then every change, until ``stop`` is set (or the caller stops)."""
    subject = filter_subject(cluster, protocol, service, address)
    events: "queue.Queue[Any]" = queue.Queue(100)
    stop = stop or threading.Event()

    def put(item: Any) -> None:
        while not stop.is_set():   # type: ignore[union-attr]
            try:
                events.put(item, timeout=0.2)
                return
            except queue.Full:
                continue

    async def on_msg(msg: Any) -> None:
        if _is_marker(msg):
            item: Any = WatchEvent("remove", entry_from_subject(msg.subject), msg.headers.get(MARKER, ""))
        else:
            try:
                item = WatchEvent("register", from_json(msg.data))
            except ValueError:
                return
        await asyncio.get_running_loop().run_in_executor(None, put, item)

    async def op(js: Any) -> Any:
        import nats.js.errors as je

        try:
            return await _ordered(js, stream, subject, cb=on_msg)
        except je.NotFoundError:
            raise NatsError(f"could not watch registrations: stream {stream} not found") from None

    sub = conn.jetstream(op, "could not watch registrations")
    try:
        while not stop.is_set():
            try:
                yield events.get(timeout=0.2)
            except queue.Empty:
                continue
    finally:
        stop.set()
        try:
            conn.run(lambda nc: sub.unsubscribe(), 2.0)
        except Exception:
            pass

