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

import threading

from ccm.fleet import OUTCOME_HEADER, STREAM, STREAM_SUBJECTS, subjects
from ccm.fleet.view import FailedHosts, Fleet, decode
from ccm.model.durations import parse_duration
from ccm.nats import NatsError
from ccm.typing_guard import TYPE_CHECKING

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


def _fast_context(conn: Any) -> Any:
    """The context when the fast path (``ccm.fleet.fastread``) can read it, else None."""
    import os

    from ccm.fleet import wire

    ctx = conn.context()
    if os.environ.get("CCM_REPORT_CLIENT", "") == "nats-py" or not wire.supports(ctx):
        return None
    return ctx


def _msg_id(head: Optional[bytes]) -> str:
    if not head:
        return ""
    for line in head.split(b"\r\n")[1:]:
        key, _, value = line.partition(b":")
        if key.strip() == b"Nats-Msg-Id":
            return value.strip().decode("utf-8", "replace")
    return ""


_HINT = f"\r\n{OUTCOME_HEADER}:".encode("ascii")


def _hint(head: Optional[bytes]) -> str:
    """The ``Ccm-Outcome`` header of a delivery's header block ("" when there is none)."""
    at = head.find(_HINT) if head else -1
    if at < 0:
        return ""
    at += len(_HINT)
    end = head.find(b"\r\n", at)   # type: ignore[union-attr]
    return head[at:end].strip().decode("ascii", "replace")   # type: ignore[index]


def _read(conn: Any, subject: str, collect: Any, reset: Any, what: str, *, all_messages: bool = False,
          hints: bool = False) -> None:
    """``collect(subject, body, msg_id, outcome)`` for every message read (``msg_id`` only
    with ``all_messages``; ``outcome`` only with ``hints``: the ``Ccm-Outcome`` header, ""
    without one); ``reset()`` before each attempt (a gap, an election start it again)."""
    ctx = _fast_context(conn)
    if ctx is not None:
        from ccm.fleet import fastread

        for attempt in range(3):
            reset()
            try:
                fastread.read(ctx, subject, (lambda s, body, head: collect(s, body, _msg_id(head), "")) if all_messages
                              else (lambda s, body, head: collect(s, body, "", _hint(head))) if hints
                              else (lambda s, body, head: collect(s, body, "", "")), all_messages=all_messages,
                              what=what)
                return
            except fastread.Gap:
                if attempt == 2:
                    raise NatsError(f"{what}: messages were lost while reading, three times") from None
    from ccm.registration.stream import read_subjects

    def on_msg(msg: Any) -> None:
        headers = msg.headers or {}
        collect(msg.subject, msg.data, headers.get("Nats-Msg-Id", "") if all_messages else "",
                headers.get(OUTCOME_HEADER, ""))

    async def op(js: Any) -> None:
        import nats.js.api as api

        reset()   # a retried read (a gap, an election) starts from scratch
        policy = api.DeliverPolicy.ALL if all_messages else api.DeliverPolicy.LAST_PER_SUBJECT
        await read_subjects(js, STREAM, subject, on_msg, deliver_policy=policy, what=what)

    conn.jetstream(op, what, attempt_timeout=READ_TIMEOUT, budget=READ_BUDGET)


def read_fleet(conn: Any, *, failed: bool = False) -> Fleet:
    """The last report of every host and manifest; ``failed``: of every host whose last
    reports include a failed one (and maybe others: the caller filters), decoding only
    those (``view.FailedHosts``; ``$CCM_REPORT_CLIENT=nats-py`` decodes every report).
    The cyclic collector is off meanwhile: 30,000 decoded reports (210,000 containers, no
    cycles) would have it re-scan the growing fold ~20 times (measured: 0.07-0.2 s)."""
    import gc

    enabled = gc.isenabled()
    gc.disable()
    try:
        return _read_fleet(conn, failed)
    finally:
        if enabled:
            gc.enable()


def _read_fleet(conn: Any, failed: bool) -> Fleet:
    import os

    if failed and os.environ.get("CCM_REPORT_CLIENT", "") != "nats-py":
        hosts: List[FailedHosts] = [FailedHosts()]

        def again() -> None:
            hosts[0] = FailedHosts()

        _read(conn, subjects.all_filter(), lambda s, body, _id, hint: hosts[0].add(s, body, hint), again,
              "could not read fleet reports", hints=True)
        return hosts[0].fleet()
    box: List[Fleet] = [Fleet()]

    def reset() -> None:
        box[0] = Fleet()

    def collect(subject: str, body: bytes, _msg_id: str, _hint: str) -> None:
        box[0].add(subject, body)

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

    def collect(subject: str, body: bytes, msg_id: str, _hint: str) -> None:
        box[0].add(subject, body, msg_id)

    _read(conn, subjects.host_filter(instance), collect, reset, "could not read reports", all_messages=True)
    return box[0]


def watch(conn: Any, stop: Optional[threading.Event] = None) -> Iterator[Tuple[str, Optional[Dict[str, Any]]]]:
    """(subject, document or None when malformed) of every report published from now on."""
    from ccm.registration.stream import follow

    async def subscribe(js: Any, cb: Any) -> Any:
        import nats.js.api as api
        import nats.js.errors as je

        subject = subjects.all_filter()
        config = api.ConsumerConfig(filter_subjects=[subject], inactive_threshold=5.0)
        try:
            return await js.subscribe(subject, stream=STREAM, ordered_consumer=True, cb=cb, config=config,
                                      deliver_policy=api.DeliverPolicy.NEW, idle_heartbeat=2.0)
        except je.NotFoundError:
            raise NatsError(f"could not watch reports: stream {STREAM} not found") from None

    yield from follow(conn, subscribe, lambda msg: (msg.subject, decode(msg.data)), "could not watch reports", stop,
                      size=1000, budget=READ_BUDGET)
