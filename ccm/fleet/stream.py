"""The ``CCM_REPORTS`` stream: init, the fleet's current state, one host's history, watch.

What: ``init`` creates or updates the stream (idempotent): subjects
``choria.ccm.reports.>``, limits retention, every message kept for ``--max-age``
(``max_msgs_per_subject`` unlimited, so the last message of a subject is a host's current
state and the older ones its history), ``allow_direct`` for cheap reads, a duplicate
window so a re-sent report is stored once. ``read_fleet`` folds the last message of every
subject into a ``view.Fleet`` as it arrives (the registration lookup's push consumer);
``read_host`` reads one host's subjects (``--history``); ``watch`` follows new reports.
Guarantees: a read that cannot start fails with one ``NatsError`` within about 5 s (connect
deadline plus a short retry budget); malformed messages are counted, never raised;
reports re-sent by a host (same ``Nats-Msg-Id``) are shown once.
Not: publishing (``ccm.fleet.publish``), presentation (``view``, ``html``, ``prom``).
"""
from __future__ import annotations

import asyncio
import queue
import threading

from ccm.fleet import STREAM, STREAM_SUBJECTS, subjects
from ccm.fleet.view import Fleet, decode
from ccm.model.durations import parse_duration
from ccm.nats import NatsError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, Iterator, List, Optional, Tuple

READ_BUDGET = 1.0          # retrying transient failures of a read (connect time not included)
READ_TIMEOUT = 120.0
DUPLICATE_WINDOW = 600.0   # seconds: covers a report queued by one run and re-sent by the next


def init(conn: Any, *, replicas: int = 1, max_age: str = "30d") -> Any:
    if not 1 <= replicas <= 5:
        raise NatsError("replicas must be between 1 and 5")
    try:
        age = parse_duration(max_age)
    except ValueError as exc:
        raise NatsError(f"invalid --max-age {max_age!r}: {exc}") from None
    if age <= 0:
        raise NatsError("max age must be greater than 0")

    async def op(js: Any) -> Any:
        import nats.js.api as api
        import nats.js.errors as je

        cfg = api.StreamConfig(
            name=STREAM, subjects=list(STREAM_SUBJECTS), retention=api.RetentionPolicy.LIMITS,
            storage=api.StorageType.FILE, max_age=age, max_msgs_per_subject=-1, num_replicas=replicas,
            duplicate_window=min(DUPLICATE_WINDOW, age), allow_direct=True, discard=api.DiscardPolicy.OLD)
        try:
            await js.stream_info(STREAM)
        except je.NotFoundError:
            return await js.add_stream(cfg)
        return await js.update_stream(cfg)

    return conn.jetstream(op, f"could not create stream {STREAM}", attempt_timeout=12.0, api_timeout=5.0)


def _read(conn: Any, subject: str, collect: Any, reset: Any, what: str, *, all_messages: bool = False) -> None:
    from ccm.registration.stream import read_subjects

    async def op(js: Any) -> None:
        import nats.js.api as api

        reset()   # a retried read (a gap, an election) starts from scratch
        policy = api.DeliverPolicy.ALL if all_messages else api.DeliverPolicy.LAST_PER_SUBJECT
        await read_subjects(js, STREAM, subject, collect, deliver_policy=policy, what=what)

    conn.jetstream(op, what, attempt_timeout=READ_TIMEOUT, budget=READ_BUDGET)


def read_fleet(conn: Any) -> Fleet:
    """The last report of every host and manifest."""
    box: List[Fleet] = [Fleet()]

    def reset() -> None:
        box[0] = Fleet()

    def collect(msg: Any) -> None:
        box[0].add(msg.subject, msg.data)

    _read(conn, subjects.all_filter(), collect, reset, "could not read fleet reports")
    return box[0]


class HostReports:
    """One host's reports, newest first: (subject, document); malformed ones counted."""

    def __init__(self, history: Optional[int]):
        self.history = history
        self.latest: Dict[str, Tuple[int, str, Dict[str, Any]]] = {}   # subject -> (seq, subject, doc)
        self.runs: List[Tuple[int, str, Dict[str, Any]]] = []
        self.seen: Dict[str, None] = {}
        self.malformed = 0
        self._seq = 0

    def add(self, subject: str, body: bytes, msg_id: str) -> None:
        if msg_id:
            if msg_id in self.seen:
                return   # a re-sent report the server's duplicate window did not catch
            self.seen[msg_id] = None
        doc = decode(body)
        if doc is None or doc["instance"] != subjects.parse_subject(subject)[0]:
            self.malformed += 1
            return
        self._seq += 1
        item = (self._seq, subject, doc)
        if self.history is None:
            self.latest[subject] = item
        else:
            self.runs.append(item)
            if len(self.runs) > self.history:
                del self.runs[0]

    def reports(self) -> List[Tuple[str, Dict[str, Any]]]:
        items = list(self.latest.values()) if self.history is None else self.runs
        return [(s, d) for _, s, d in sorted(items, key=lambda i: -i[0])]


def read_host(conn: Any, instance: str, history: Optional[int] = None) -> HostReports:
    """The host's last report per manifest, or (``history``) its last ``history`` reports."""
    box: List[HostReports] = [HostReports(history)]

    def reset() -> None:
        box[0] = HostReports(history)

    def collect(msg: Any) -> None:
        headers = msg.headers or {}
        box[0].add(msg.subject, msg.data, headers.get("Nats-Msg-Id", ""))

    _read(conn, subjects.host_filter(instance), collect, reset, "could not read reports", all_messages=True)
    return box[0]


def watch(conn: Any, stop: Optional[threading.Event] = None) -> Iterator[Tuple[str, Optional[Dict[str, Any]]]]:
    """(subject, document or None when malformed) of every report published from now on."""
    events: "queue.Queue[Tuple[str, Optional[Dict[str, Any]]]]" = queue.Queue(1000)
    stop = stop or threading.Event()

    def put(item: Tuple[str, Optional[Dict[str, Any]]]) -> None:
        while not stop.is_set():
            try:
                events.put(item, timeout=0.2)
                return
            except queue.Full:
                continue

    async def on_msg(msg: Any) -> None:
        item = (msg.subject, decode(msg.data))
        await asyncio.get_running_loop().run_in_executor(None, put, item)

    async def op(js: Any) -> Any:
        import nats.js.api as api
        import nats.js.errors as je

        subject = subjects.all_filter()
        config = api.ConsumerConfig(filter_subjects=[subject], inactive_threshold=5.0)
        try:
            return await js.subscribe(subject, stream=STREAM, ordered_consumer=True, cb=on_msg, config=config,
                                      deliver_policy=api.DeliverPolicy.NEW, idle_heartbeat=2.0)
        except je.NotFoundError:
            raise NatsError(f"could not watch reports: stream {STREAM} not found") from None

    sub = conn.jetstream(op, "could not watch reports", budget=READ_BUDGET)
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
