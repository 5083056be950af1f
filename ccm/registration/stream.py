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

from ccm.model.durations import parse_duration
from ccm.nats import NatsError
from ccm.nats.connection import Connection
from ccm.registration import STREAM_SUBJECTS
from ccm.registration.entry import Entry, from_json
from ccm.registration.filesd import Entries, sort_entries
from ccm.registration.subjects import entry_from_subject, filter_subject, publish_subject
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Awaitable, Callable, Dict, Iterator, List, Optional

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


class _Gap(Exception):
    """A consumer sequence gap (a lost message): the read is retried from scratch."""


def _ack_tokens(reply: str) -> "tuple[int, int]":
    """(consumer sequence, pending) from a JetStream delivery's reply subject (v1 or v2)."""
    t = reply.split(".")
    if len(t) == 9:
        return int(t[6]), int(t[8])
    return int(t[8]), int(t[10])


async def _read_last_per_subject(js: Any, stream: str, subject: str) -> List[bytes]:
    """The last message body of every subject matching ``subject``, markers dropped."""
    bodies: List[bytes] = []
    await read_subjects(js, stream, subject, lambda msg: bodies.append(msg.data))
    return bodies


def _on_delivery(nc: Any, done: "asyncio.Future[None]", state: Dict[str, int],
                 collect: Callable[[Any], None]) -> Callable[[Any], Awaitable[None]]:
    """The push consumer's callback: flow control answered, a sequence gap or the last pending
    message ends ``done``, every other non-marker message goes to ``collect``."""
    async def on_msg(msg: Any) -> None:
        if done.done():
            return
        headers = msg.headers
        if not msg.reply or msg.reply.startswith("$JS.FC.") or (headers and headers.get("Status") == "100"):
            if msg.reply:                       # flow control request: answer it
                await nc.publish(msg.reply, b"")
            return
        try:
            cseq, pending = _ack_tokens(msg.reply)
        except (ValueError, IndexError):
            return
        if cseq != state["seq"] + 1:
            done.set_exception(_Gap())
            return
        state["seq"] = cseq
        if not (headers and headers.get(MARKER)):
            collect(msg)
        if pending == 0:
            done.set_result(None)

    return on_msg


async def read_subjects(js: Any, stream: str, subject: str, collect: Callable[[Any], None], *,
                        deliver_policy: Any = None, what: str = "could not query registrations") -> None:
    """Hand ``collect(msg)`` every stored message matching ``subject`` (default:
    the last of each subject), markers dropped, until the server reports nothing pending.

    An ephemeral push consumer (no acks, flow control, in memory, R1) whose deliveries a
    callback collects; gaps in the consumer sequence abort the read so the caller retries
    (ordered semantics). ``ccm.fleet.stream`` reads fleet reports with it too.
    """
    import nats.js.api as api
    import nats.js.errors as je

    nc = js._nc
    loop = asyncio.get_running_loop()
    done: "asyncio.Future[None]" = loop.create_future()
    state = {"seq": 0}

    on_msg = _on_delivery(nc, done, state, collect)
    inbox = nc.new_inbox()
    sub = await nc.subscribe(inbox, cb=on_msg, pending_msgs_limit=1 << 20, pending_bytes_limit=256 << 20)
    config = api.ConsumerConfig(deliver_subject=inbox, filter_subject=subject,
                                deliver_policy=deliver_policy or api.DeliverPolicy.LAST_PER_SUBJECT,
                                ack_policy=api.AckPolicy.NONE, max_deliver=1, flow_control=True, idle_heartbeat=2.0,
                                mem_storage=True, num_replicas=1, inactive_threshold=5.0)
    consumer = ""
    try:
        try:
            info = await js._jsm.add_consumer(stream, config=config)
        except je.NotFoundError:
            raise NatsError(f"{what}: stream {stream} not found") from None
        consumer = info.name
        if info.num_pending == 0 and not (info.delivered and info.delivered.consumer_seq) and not done.done():
            return
        idle = 0
        while not done.done():
            seen = state["seq"]
            await asyncio.wait({done}, timeout=LOOKUP_IDLE)
            if not done.done() and state["seq"] == seen:
                idle += 1
                if idle >= 1:
                    raise asyncio.TimeoutError()
        done.result()
    finally:
        await sub.unsubscribe()
        if consumer:
            try:
                await js._jsm.delete_consumer(stream, consumer)
            except Exception:
                pass


def lookup(conn: Connection, stream: str, cluster: str = "*", protocol: str = "*", service: str = "*",
           address: str = "*") -> Entries:
    """The last entry of every matching subject, markers dropped, sorted."""
    if not stream:
        raise NatsError("could not query registrations: no registration stream name")
    subject = filter_subject(cluster, protocol, service, address)

    async def op(js: Any) -> List[bytes]:
        return await _read_last_per_subject(js, stream, subject)

    bodies = conn.jetstream(op, "could not query registrations", attempt_timeout=LOOKUP_TIMEOUT)
    entries: List[Entry] = []
    for body in bodies:
        try:
            entries.append(from_json(body))
        except ValueError as exc:
            raise NatsError(str(exc)) from None
    return Entries(sort_entries(entries))


class EntryNotFound(NatsError):
    """``remove`` of an entry the stream does not hold (never published, expired, removed)."""


STREAM_NOT_FOUND = 10059


def remove(conn: Connection, stream: str, entry: Entry) -> str:
    """Purge ``entry``'s subject and leave a removal marker; -> the subject. Raises
    ``EntryNotFound`` when the subject holds no entry (nothing, or only a marker)."""
    subject = publish_subject(entry)

    async def op(js: Any) -> str:
        import nats.js.errors as je

        try:
            last = await js._jsm.get_last_msg(stream, subject)
        except je.NotFoundError as exc:
            return "nostream" if exc.err_code == STREAM_NOT_FOUND else "missing"
        if last.headers and last.headers.get(MARKER):
            return "missing"
        await js.purge_stream(stream, subject=subject)
        # The server writes no marker for a purge; leave one (rolled up, expiring) so that
        # watchers, ours and upstream's, see the removal. Lookups skip markers.
        await js.publish(subject, b"", headers={MARKER: "Purge", "Nats-Rollup": "sub", "Nats-TTL": "1m"})
        return "removed"

    state = conn.jetstream(op, "could not remove registration")
    if state == "nostream":
        raise NatsError(f"could not remove registration: stream {stream} not found")
    if state == "missing":
        raise EntryNotFound(f"registration entry {entry.cluster}/{entry.service}/{entry.protocol} at "
                            f"{entry.address}:{entry.port} not found in stream {stream}")
    return subject


@dataclass
class WatchEvent:
    action: str            # "register" or "remove"
    entry: Entry
    reason: str = ""


def follow(conn: Connection, subscribe: Callable[[Any, Any], Any], convert: Callable[[Any], Any], what: str,
           stop: Optional[threading.Event] = None, *, size: int = 100, budget: Optional[float] = None) -> Iterator[Any]:
    """``convert(msg)`` of every message of a subscription (``subscribe(js, cb)`` makes it on the
    connection's loop) as it arrives, None results skipped, until ``stop`` is set or the caller stops.
    ``ccm.fleet.stream.watch`` follows reports with it too."""
    events: "queue.Queue[Any]" = queue.Queue(size)
    stop = stop or threading.Event()

    def put(item: Any) -> None:
        while not stop.is_set():
            try:
                events.put(item, timeout=0.2)
                return
            except queue.Full:
                continue

    async def on_msg(msg: Any) -> None:
        item = convert(msg)
        if item is not None:
            await asyncio.get_running_loop().run_in_executor(None, put, item)

    sub = conn.jetstream(lambda js: subscribe(js, on_msg), what, budget=budget)
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


def watch(conn: Connection, stream: str, cluster: str = "*", protocol: str = "*", service: str = "*",
          address: str = "*", stop: Optional[threading.Event] = None) -> Iterator[WatchEvent]:
    """Current state, then every change, until ``stop`` is set (or the caller stops)."""
    subject = filter_subject(cluster, protocol, service, address)

    def convert(msg: Any) -> Optional[WatchEvent]:
        if _is_marker(msg):
            return WatchEvent("remove", entry_from_subject(msg.subject), msg.headers.get(MARKER, ""))
        try:
            return WatchEvent("register", from_json(msg.data))
        except ValueError:
            return None

    async def subscribe(js: Any, cb: Any) -> Any:
        import nats.js.errors as je

        try:
            return await _ordered(js, stream, subject, cb=cb)
        except je.NotFoundError:
            raise NatsError(f"could not watch registrations: stream {stream} not found") from None

    yield from follow(conn, subscribe, convert, "could not watch registrations", stop)
